/**
 * A new user's first hour (issue 57 point 4), through the real `mdq` process and the files a
 * reader pastes from: the README's walk-through runs as pasted (BASE changed, nothing else)
 * against a demo on a port other than 4000 and answers the README's figures; the demo prints the
 * same walk-through with its own address and dates, and its request logs go to the file it names;
 * `--admin-port` on `demo` and `serve`, and a taken port is named with its listener before
 * anything is seeded; the README stays the front door, its benchmark history in bench/README.md;
 * the docs say what a load makes visible and what a publish does.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { environment, freePort, MDQ, runMdq } from "@mdq/test-support";

const run = promisify(execFile);
const ROOT = new URL("../../../../", import.meta.url);
const readme = readFileSync(new URL("README.md", ROOT), "utf8");

/** The README's walk-through: the `sh` block of "The daily flow with curl". */
function readmeWalkThrough(): string {
  const section = readme.indexOf("## The daily flow with curl");
  assert.notEqual(section, -1, "the README has a daily-flow section");
  const start = readme.indexOf("```sh\n", section) + "```sh\n".length;
  return readme.slice(start, readme.indexOf("\n```", start) + 1);
}

/** The lines a reader runs (and the step headings), without the README's captured answers. */
function commandLines(script: string): string[] {
  return script
    .split("\n")
    .filter((line) => line.trim() !== "" && (!line.startsWith("#") || /^# \d\./.test(line)));
}

/** The first day of the README's range, which the demo must reach back to. */
const README_FROM = "2026-10-01";
const README_TO = "2026-10-31";
/** The README's figures, which a deterministic demo answers on any day. */
const README_FIRST_WEEK =
  '{"DATE_WEEK":"2026-10-12","MARKET":"US","TOTAL_SPEND":16223.43,"TOTAL_REVENUE":27340.66,"currency":"EUR"}';
const README_ROWS = 651;

/** Days of data a demo needs, ending yesterday, to hold the README's range (and a margin). */
function daysReaching(day: string): number {
  return Math.max(30, Math.ceil((Date.now() - Date.parse(`${day}T00:00:00Z`)) / 86_400_000) + 2);
}

/** Holds a loopback port (a free one when `port` is 0) until closed. */
async function holdPort(port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return { server, port: (server.address() as { port: number }).port };
}

/** What `mdq demo` and `mdq serve` say when the admin listener's port is taken. */
function adminPortTaken(port: number): string {
  return `mdq: admin listener: 127.0.0.1:${port} is in use; pass --admin-port (MDQ_ADMIN_PORT)\n`;
}

/** `mdq <command>` on a free public port, its admin listener on `adminPort`, its store in `data`. */
async function runWithAdminPort(command: string, adminPort: number, data: string, ...rest: string[]) {
  return runMdq([
    command,
    "--port",
    String(await freePort()),
    "--admin-port",
    String(adminPort),
    "--data",
    data,
    ...rest,
  ]);
}

describe("the README's walk-through, against a demo on another port", () => {
  let work: string;
  let demo: ChildProcess;
  let port: number;
  let output = "";

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-first-hour-"));
    do port = await freePort();
    while (port === 4000);
    demo = spawn(
      process.execPath,
      [MDQ, "demo", "--port", String(port), "--admin-port", String(await freePort())].concat([
        "--days",
        String(daysReaching(README_FROM)),
      ]),
      // As a new user runs it: in an empty directory, the credentials in ./demo-credentials.json.
      { cwd: work, env: environment({ MDQ_LOG_LEVEL: "info" }), stdio: ["ignore", "pipe", "pipe"] },
    );
    let errors = "";
    demo.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      demo.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("wc -l < records.ndjson")) resolve();
      });
      demo.once("exit", (code) => reject(new Error(`mdq demo exited with ${code}: ${errors}`)));
    });
  });

  after(async () => {
    if (demo.exitCode === null) {
      const exited = new Promise((resolve) => demo.once("exit", resolve));
      demo.kill("SIGTERM");
      await exited;
    }
    await rm(work, { recursive: true, force: true });
  });

  it("runs as pasted, BASE set once, and answers the README's figures through the export", async () => {
    const pasted = readmeWalkThrough();
    const lines = pasted.split("\n");
    assert.deepEqual(
      lines.filter((line) => line.startsWith("BASE=")),
      ["BASE=http://localhost:4000"],
    );
    assert.equal(pasted.match(/localhost/g)?.length, 1, "every request goes through $BASE");
    const script = pasted.replace("BASE=http://localhost:4000", `BASE=http://localhost:${port}`);
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], { cwd: work });
    const answers = stdout.trimEnd().split("\n");
    assert.equal(answers.length, 5, stdout);
    assert.equal(JSON.parse(answers[0]!).data.marketingDataReadiness.status, "READY");
    const records = JSON.parse(answers[1]!);
    assert.equal(records.errors, undefined);
    assert.equal(records.extensions.pageInfo.marketingRecords.totalCount, README_ROWS);
    assert.equal(records.data.marketingRecords[0].recordId, "acme-20261031-0");
    assert.ok(readme.includes(`"totalCount":${README_ROWS}`));
    assert.ok(answers[2]!.startsWith(`{"data":{"marketingAggregate":[${README_FIRST_WEEK},`), answers[2]);
    assert.ok(readme.includes(README_FIRST_WEEK), "the README quotes the figure the demo answers");
    assert.equal(answers[3]!.trim(), `mdq-row-count: ${README_ROWS}`);
    assert.equal(answers[4]!.trim(), String(README_ROWS));
    assert.equal(
      (await readFile(join(work, "records.ndjson"), "utf8")).trimEnd().split("\n").length,
      README_ROWS,
    );
  });

  it("is the walk-through the demo prints, with the demo's own address and dates", () => {
    const printed = output.slice(output.indexOf("BASE="));
    assert.ok(printed.startsWith(`BASE=http://localhost:${port}\n`), printed);
    const [, from, to] =
      /"r":\{"from":"(\d{4}-\d{2}-\d{2})","to":"(\d{4}-\d{2}-\d{2})"\}/.exec(printed) ?? [];
    assert.ok(from && to, printed);
    const asReadme = printed
      .replace(`BASE=http://localhost:${port}`, "BASE=http://localhost:4000")
      .replaceAll(from, README_FROM)
      .replaceAll(to, README_TO);
    assert.deepEqual(commandLines(asReadme), commandLines(readmeWalkThrough()));
    assert.match(
      printed,
      /# 5\. .*\n.*\ncurl -sS --fail --compressed .*\n {2}"\$BASE\/export\/marketing-records\?/,
    );
  });

  it("keeps the terminal for the guide: its request logs go to the file it names", async () => {
    const logFile = join(work, "data", "demo-uk", "mdq.log");
    assert.ok(output.includes(`Request logs go to ${logFile};`), output);
    assert.ok(output.includes("the admin listener (for mdq status, mdq load, ...) is http://127.0.0.1:"));
    assert.doesNotMatch(output, /^\{"level"/m);
    const log = await readFile(logFile, "utf8");
    assert.match(log, /"msg":"request completed"/);
    assert.match(log, /\/export\/marketing-records\?/);
  });
});

describe("the demo's and the service's two listeners", () => {
  let work: string;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-listeners-"));
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("takes --admin-port on demo and serve, and names the admin listener in --help", async () => {
    for (const command of ["demo", "serve"]) {
      const help = await runMdq([command, "--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /--admin-port <port> +port of the admin listener, loopback only/);
      assert.match(help.stdout, /default the public\s+port \+ 1000/);
    }
  });

  it("a demo whose admin port is taken exits 1 naming it, before seeding anything", async () => {
    const held = await holdPort();
    try {
      const data = join(work, "taken-admin");
      const result = await runWithAdminPort(
        "demo",
        held.port,
        data,
        "--credentials",
        join(work, "taken-admin.json"),
      );
      assert.deepEqual(result, { code: 1, stdout: "", stderr: adminPortTaken(held.port) });
      assert.equal(existsSync(data), false, "nothing was seeded");
      assert.equal(existsSync(join(work, "taken-admin.json")), false);
    } finally {
      held.server.close();
    }
  });

  it("names the default admin port (the public port + 1000) when that one is taken", async () => {
    let held: { server: Server; port: number } | undefined;
    let port = 0;
    for (let attempt = 0; held === undefined && attempt < 20; attempt++) {
      port = await freePort();
      if (port + 1000 > 65535) continue;
      held = await holdPort(port + 1000).catch(() => undefined);
    }
    assert.ok(held, "a port whose + 1000 is free");
    try {
      const result = await runMdq([
        "demo",
        "--port",
        String(port),
        "--data",
        join(work, "default-admin"),
        "--credentials",
        join(work, "default-admin.json"),
      ]);
      assert.equal(result.code, 1);
      assert.equal(result.stderr, adminPortTaken(port + 1000));
      assert.equal(existsSync(join(work, "default-admin")), false);
    } finally {
      held.server.close();
    }
  });

  it("mdq serve names a taken public or admin port the same way, before opening its store", async () => {
    const held = await holdPort();
    try {
      const data = join(work, "serve");
      const admin = await runWithAdminPort("serve", held.port, data);
      assert.equal(admin.code, 1);
      assert.equal(admin.stderr, adminPortTaken(held.port));
      const open = await runMdq(["serve", "--port", String(held.port), "--data", data]);
      assert.equal(open.code, 1);
      assert.equal(
        open.stderr,
        `mdq: public listener: 127.0.0.1:${held.port} is in use; pass --port (MDQ_PORT)\n`,
      );
      assert.equal(existsSync(data), false, "the store was not opened");
    } finally {
      held.server.close();
    }
  });
});

describe("the README is the front door", () => {
  it("fits in about 330 lines: what MDQ is, two commands, the demo, curl, configuration, architecture, docs", () => {
    const lines = readme.split("\n").length;
    assert.ok(lines <= 330, `${lines} lines`);
    const headings = readme.split("\n").filter((line) => line.startsWith("## "));
    for (const heading of [
      "## Two commands",
      "## The demo",
      "## The daily flow with curl",
      "## Configuration",
      "## Architecture",
      "## Docs",
      "## Performance",
    ]) {
      assert.ok(headings.includes(heading), `${heading} in ${headings.join(" | ")}`);
    }
  });

  it("keeps one benchmark table, the history being in bench/README.md", async () => {
    const performance = readme.slice(readme.indexOf("## Performance"));
    const tables = performance.split("\n").filter((line) => /^\| -/.test(line));
    assert.equal(tables.length, 1);
    const bench = await readFile(new URL("bench/README.md", ROOT), "utf8");
    assert.match(bench, /\n## From the README: the performance history\n/);
    assert.ok(bench.includes("**Loads** (`node bench/load.mjs"));
  });

  it("says what a load makes visible and what a publish does, in the README and docs/cli.md", async () => {
    assert.match(readme, /\*\*A load is visible to the brands at once\*\*/);
    assert.match(
      readme,
      /\*\*A\s+publish changes no data\*\*: it turns the processing date's `marketingDataReadiness` to `READY`/,
    );
    const cli = await readFile(new URL("docs/cli.md", ROOT), "utf8");
    assert.match(cli, /\*\*What a load makes visible: everything, at once\.\*\*/);
    assert.match(cli, /\*\*Publishing changes no data\*\*/);
  });
});
