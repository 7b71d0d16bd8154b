import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { freePort, MDQ, runMdq } from "@mdq/test-support";

const run = promisify(execFile);

describe("mdq demo", () => {
  let work: string;
  let demo: ChildProcess;
  let output = "";
  let seedLog = "";
  let port: number;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-cli-"));
    port = await freePort();
    demo = spawn(
      process.execPath,
      [MDQ, "demo", "--port", String(port), "--days", "30", "--credentials", join(work, "creds.json")],
      // The default data directory, ./data/demo-uk, in `work`.
      { cwd: work, env: { ...process.env, MDQ_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    await new Promise<void>((resolve, reject) => {
      demo.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("wc -l < records.ndjson")) resolve();
      });
      demo.stderr!.on("data", (chunk: Buffer) => {
        seedLog += chunk.toString();
      });
      demo.once("exit", (code) => reject(new Error(`mdq demo exited early with ${code}`)));
    });
  });

  after(async () => {
    demo.kill("SIGTERM");
    await new Promise((resolve) => demo.once("exit", resolve));
    await rm(work, { recursive: true, force: true });
  });

  it("writes the credentials JSON of CONTRACT §4, readable only by its owner", async () => {
    const file = join(work, "creds.json");
    const credentials = JSON.parse(await readFile(file, "utf8"));
    assert.deepEqual(Object.keys(credentials).sort(), ["apps", "authUrl", "baseUrl", "region"]);
    assert.equal(credentials.region, "uk");
    assert.equal(credentials.authUrl, `http://localhost:${port}`);
    assert.ok(new Set(credentials.apps.map((app: { brandClientId: string }) => app.brandClientId)).size >= 2);
    for (const app of credentials.apps) {
      assert.deepEqual(Object.keys(app).sort(), [
        "appClientId",
        "appClientSecret",
        "brandClientId",
        "dataSources",
        "markets",
        "name",
      ]);
      assert.ok(app.appClientSecret.length >= 43, "a secret carries at least 256 bits");
      assert.ok(app.markets.length > 0 && app.dataSources.length > 0);
    }
    assert.equal((await stat(file)).mode & 0o077, 0);
  });

  it("prints a curl walk-through that runs as printed and walks the daily flow", async () => {
    const script = output.slice(output.indexOf("BASE="));
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], { cwd: work });
    const answers = stdout.trim().split("\n");
    assert.equal(answers.length, 5);
    const readiness = JSON.parse(answers[0]!);
    assert.equal(readiness.data.marketingDataReadiness.status, "READY");
    const records = JSON.parse(answers[1]!);
    assert.equal(records.errors, undefined);
    assert.ok(Array.isArray(records.data.marketingRecords));
    const aggregate = JSON.parse(answers[2]!);
    assert.equal(aggregate.errors, undefined);
    assert.ok(aggregate.data.marketingAggregate.length > 0);
    const exported = Number(answers[4]);
    assert.ok(exported > 0);
    assert.equal(answers[3]!.trim(), `mdq-row-count: ${exported}`);
  });

  it("serves the GraphiQL explorer at the GET /graphql it prints, its tabs asking about the first demo brand", async () => {
    const url = `http://localhost:${port}/graphql`;
    assert.ok(output.includes(`GraphiQL explorer: open ${url} in a browser`), output);
    const response = await fetch(url, { headers: { accept: "text/html" } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    const credentials = JSON.parse(await readFile(join(work, "creds.json"), "utf8"));
    assert.ok((await response.text()).includes(`\\"clientId\\": \\"${credentials.apps[0].brandClientId}\\"`));
  });

  it("prints a walk-through that stops with the token endpoint's answer when the secret is wrong", async () => {
    const script = output
      .slice(output.indexOf("BASE="))
      .replace(/export MDQ_APP_CLIENT_SECRET=.*\n/, "export MDQ_APP_CLIENT_SECRET=not-the-secret\n");
    const result = await run("bash", ["-c", script], { cwd: work }).then(
      () => ({ code: 0, stdout: "", stderr: "" }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.notEqual(result.code, 0);
    assert.equal(result.stdout, "");
    assert.match(
      result.stderr,
      /^no token: \{"error":"invalid_client","error_description":"client authentication failed"\}$/m,
    );
    assert.match(result.stderr, /TOKEN: no token, see above/);
  });

  it("reports the records it seeded for each brand", async () => {
    assert.match(seedLog, /mdq demo: brand-acme: \d+ records \(\d+ planned\)/);
  });

  it("does not print or log any app secret outside the credentials file", async () => {
    const credentials = JSON.parse(await readFile(join(work, "creds.json"), "utf8"));
    for (const app of credentials.apps) assert.ok(!output.includes(app.appClientSecret));
  });

  it("refuses a second demo on the directory in use (exit 2), leaving the first demo and its credentials intact", async () => {
    const credentials = await readFile(join(work, "creds.json"), "utf8");
    const second = await runMdq(
      [
        "demo",
        "--port",
        String(await freePort()),
        "--scale",
        "50",
        "--credentials",
        join(work, "creds.json"),
      ],
      {},
      { cwd: work },
    );
    assert.equal(second.code, 2);
    assert.equal(
      second.stderr,
      `mdq: ${join(work, "data", "demo-uk")} is in use by the demo running as process ${demo.pid}; ` +
        "stop it first, or give this demo its own --data and --credentials\n",
    );
    assert.equal(await readFile(join(work, "creds.json"), "utf8"), credentials);
    const app = JSON.parse(credentials).apps[0];
    const basic = Buffer.from(`${app.appClientId}:${app.appClientSecret}`).toString("base64");
    const token = await fetch(`http://127.0.0.1:${port}/oauth2/token`, {
      method: "POST",
      headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&scope=api_data%2Fread",
    });
    assert.equal(token.status, 200);
  });

  it("is found by mdq status run beside it, with no --data (./data/demo-uk when ./data/uk is absent)", async () => {
    const status = await runMdq(["status", "--json"], { MDQ_DATA_DIR: "", MDQ_REGION: "" }, { cwd: work });
    assert.equal(status.code, 0, status.stderr);
    const answer = JSON.parse(status.stdout);
    assert.equal(answer.region, "uk");
    assert.deepEqual(
      answer.brands.map((brand: { brandId: string }) => brand.brandId),
      ["brand-acme", "brand-globex", "brand-initech"],
    );
  });

  it("refuses to wipe a non-empty directory that is not a demo's, with exit code 2", async () => {
    const foreign = join(work, "foreign");
    await run("mkdir", ["-p", foreign]);
    await writeFile(join(foreign, "precious.txt"), "keep me");
    const result = await runMdq([
      "demo",
      "--seed-only",
      "--data",
      foreign,
      "--credentials",
      join(work, "x.json"),
    ]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /not a demo data directory/);
    assert.equal(await readFile(join(foreign, "precious.txt"), "utf8"), "keep me");
  });
});

describe("mdq serve configuration", () => {
  it("names the bad key and exits 2", async () => {
    const result = await runMdq(["serve"], { MDQ_PORT: "port-four-thousand" });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /MDQ_PORT/);
  });

  it("exits 2 on an unknown option", async () => {
    const result = await runMdq(["serve", "--no-such-flag"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /unknown option '--no-such-flag'/);
  });

  it("rejects an unknown time zone by its variable", async () => {
    const result = await runMdq(["serve"], { MDQ_TIME_ZONE: "Mars/Olympus" });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /MDQ_TIME_ZONE/);
  });
});
