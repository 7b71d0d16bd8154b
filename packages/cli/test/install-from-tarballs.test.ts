/**
 * What an operator and a brand install: the tarballs `npm run tarballs` (scripts/pack.mjs) makes,
 * each installed into an empty directory with `npm install <tarballs>` (the other dependencies
 * from the registry), with no checkout around them. The operator's `mdq demo` serves a region,
 * and the brand's `mdq-client sync` downloads a range from it.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { addDays, type DemoCredentials } from "@mdq/server";
import { freePort } from "@mdq/test-support";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const run = promisify(execFile);

interface PackedPackage {
  name: string;
  tarball: string;
  files: string[];
}
type Packed = Record<"operator" | "client", PackedPackage[]>;

/** The environment of an npm run elsewhere: none of the settings of the npm that runs this test. */
function outsideNpm(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return { ...env, ...extra };
}

/** An empty directory with the given tarballs installed by npm, as a user would. */
async function installInto(directory: string, packages: PackedPackage[]): Promise<void> {
  await mkdir(directory);
  await writeFile(join(directory, "package.json"), '{ "private": true }\n');
  await run("npm", ["install", "--no-audit", "--no-fund", ...packages.map((entry) => entry.tarball)], {
    cwd: directory,
    env: outsideNpm(),
    maxBuffer: 16 * 1024 * 1024,
  });
}

describe("the tarballs an operator and a brand install", { timeout: 600_000 }, () => {
  let work: string;
  let packed: Packed;
  let demo: ChildProcess | undefined;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-tarballs-"));
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, "scripts", "pack.mjs"), "--out", join(work, "tarballs"), "--json", "--no-build"],
      { cwd: ROOT, env: outsideNpm(), maxBuffer: 16 * 1024 * 1024 },
    );
    packed = JSON.parse(stdout);
  });

  after(async () => {
    if (demo !== undefined && demo.exitCode === null) {
      demo.kill("SIGTERM");
      await new Promise((resolve) => demo!.once("exit", resolve));
    }
    await rm(work, { recursive: true, force: true });
  });

  it("packs the operator's mdq with the service, and mdq-client without it", () => {
    const operator = packed.operator.map((entry) => entry.name);
    const client = packed.client.map((entry) => entry.name);
    assert.ok(operator.includes("@mdq/server") && operator.at(-1) === "@mdq/cli", operator.join(", "));
    assert.equal(client.at(-1), "mdq-client");
    assert.ok(!client.includes("@mdq/server") && !client.includes("@mdq/cli"), client.join(", "));
  });

  it("puts the binaries and compiled code in the tarballs, and no tests, sources or build info", () => {
    const files = (name: string) =>
      [...packed.operator, ...packed.client].find((entry) => entry.name === name)!.files;
    assert.ok(files("@mdq/cli").includes("bin/mdq.cjs") && files("@mdq/cli").includes("dist/src/main.js"));
    assert.ok(files("mdq-client").includes("bin/mdq-client.js"));
    assert.ok(
      files("mdq-client").includes("dist/src/cli/main.js") &&
        files("mdq-client").includes("dist/src/index.js"),
    );
    assert.ok(files("@mdq/server").includes("dist/src/index.js"));
    for (const entry of [...packed.operator, ...packed.client]) {
      const unwanted = entry.files.filter(
        (file) =>
          /(^|\/)test\//.test(file) ||
          file.endsWith(".tsbuildinfo") ||
          (/(^|\/)src\/.*\.ts$/.test(file) && !file.endsWith(".d.ts")),
      );
      assert.deepEqual(unwanted, [], `${entry.name} ships ${unwanted.join(", ")}`);
    }
  });

  it("installs the operator's tarballs into an empty directory, and its mdq demo serves a region", async () => {
    const host = join(work, "operator");
    await installInto(host, packed.operator);
    const port = await freePort();
    demo = spawn(
      join(host, "node_modules", ".bin", "mdq"),
      [
        "demo",
        "--port",
        String(port),
        "--scale",
        "1",
        "--days",
        "30",
        "--data",
        "data",
        "--credentials",
        "creds.json",
      ],
      {
        cwd: host,
        env: outsideNpm({ MDQ_LOG_LEVEL: "warn", MDQ_DATABASE_URL: "" }),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    let errors = "";
    demo.stderr!.on("data", (chunk: Buffer) => {
      errors += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      demo!.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("# 4.")) resolve();
      });
      demo!.once("exit", (code) => reject(new Error(`mdq demo exited with ${code}: ${errors}`)));
    });
    assert.match(output, new RegExp(`GraphQL http://localhost:${port}/graphql`));
    const credentials: DemoCredentials = JSON.parse(await readFile(join(host, "creds.json"), "utf8"));
    assert.equal(credentials.baseUrl, `http://localhost:${port}`);
  });

  it("installs mdq-client's tarballs into an empty directory, and its sync downloads a range from the demo", async () => {
    assert.ok(demo !== undefined && demo.exitCode === null, "the demo of the previous test serves");
    const brand = join(work, "brand");
    await installInto(brand, packed.client);
    assert.equal(existsSync(join(brand, "node_modules", "@mdq", "server")), false);
    const credentials: DemoCredentials = JSON.parse(
      await readFile(join(work, "operator", "creds.json"), "utf8"),
    );
    const app = credentials.apps[0]!;
    const today = new Date().toISOString().slice(0, 10);
    const [from, to] = [addDays(today, -8), addDays(today, -2)];
    const { stderr } = await run(
      "npx",
      ["--no-install", "mdq-client", "sync", "--from", from, "--to", to, "--out", "acme.csv", "--quiet"],
      {
        cwd: brand,
        env: outsideNpm({
          MDQ_AUTH_URL: credentials.authUrl,
          MDQ_BASE_URL: credentials.baseUrl,
          MDQ_BRAND_CLIENT_ID: app.brandClientId,
          MDQ_APP_CLIENT_ID: app.appClientId,
          MDQ_APP_CLIENT_SECRET: app.appClientSecret,
        }),
      },
    );
    // CSV as every command of the client writes it, the export's shape: CRLF (RFC 4180).
    const [header, ...rows] = (await readFile(join(brand, "acme.csv"), "utf8")).trimEnd().split("\r\n");
    assert.equal(
      header,
      "recordId,date,market,dataSource,channel,campaignId,campaignName,impressions,clicks,spend,conversions,revenue,currency",
    );
    assert.ok(rows.length > 0);
    const dates = new Set(rows.map((row) => row.split(",")[1]!));
    assert.ok(
      [...dates].every((date) => date >= from && date <= to),
      [...dates].join(", "),
    );
    assert.equal(new Set(rows.map((row) => row.split(",")[0])).size, rows.length, "each record once");
    assert.match(stderr, new RegExp(`wrote ${rows.length.toLocaleString("en-US")} rows `));
  });
});
