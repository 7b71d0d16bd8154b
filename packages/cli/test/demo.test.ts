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
      [
        MDQ,
        "demo",
        "--port",
        String(port),
        "--days",
        "30",
        "--data",
        join(work, "data"),
        "--credentials",
        join(work, "creds.json"),
      ],
      { env: { ...process.env, MDQ_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    await new Promise<void>((resolve, reject) => {
      demo.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("# 4.")) resolve();
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
    const script = output.slice(output.indexOf("  export MDQ_APP_CLIENT_ID"));
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], { cwd: work });
    const answers = stdout.trim().split("\n");
    assert.equal(answers.length, 3);
    const readiness = JSON.parse(answers[0]!);
    assert.equal(readiness.data.marketingDataReadiness.status, "READY");
    const records = JSON.parse(answers[1]!);
    assert.equal(records.errors, undefined);
    assert.ok(Array.isArray(records.data.marketingRecords));
    const aggregate = JSON.parse(answers[2]!);
    assert.equal(aggregate.errors, undefined);
    assert.ok(aggregate.data.marketingAggregate.length > 0);
  });

  it("reports the records it seeded for each brand", async () => {
    assert.match(seedLog, /mdq demo: brand-acme: \d+ records \(\d+ planned\)/);
  });

  it("does not print or log any app secret outside the credentials file", async () => {
    const credentials = JSON.parse(await readFile(join(work, "creds.json"), "utf8"));
    for (const app of credentials.apps) assert.ok(!output.includes(app.appClientSecret));
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
