/** How `mdq` starts and ends as a process: a taken port, a closed stdout, SIGTERM, `--version`. */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createTestDatabase, environment, freePort, MDQ, runMdq } from "@mdq/test-support";

/** Starts `mdq args` with its stdout already closed by the reader, as `| head` leaves it. */
function withClosedStdout(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; stderr(): string } {
  const child = spawn(process.execPath, [MDQ, ...args], {
    env: environment(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.destroy();
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

/** The exit code of `child`, once it is gone. */
async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, "exit")) as [number | null];
  return code;
}

describe("mdq --version", () => {
  it("prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    const result = await runMdq(["--version"]);
    assert.deepEqual(result, { code: 0, stdout: `${version}\n`, stderr: "" });
  });
});

describe("mdq with a closed stdout", () => {
  it("prints help into a closed pipe without an EPIPE stack, and exits 0", async () => {
    const run = withClosedStdout(["load", "--help"]);
    assert.equal(await exitCode(run.child), 0);
    assert.equal(run.stderr(), "");
  });

  it("a demo still serves, and stops on SIGTERM", { timeout: 60_000 }, async () => {
    const work = await mkdtemp(join(tmpdir(), "mdq-demo-closed-"));
    const port = await freePort();
    const run = withClosedStdout(
      [
        "demo",
        "--port",
        String(port),
        "--days",
        "3",
        "--data",
        join(work, "data"),
        "--credentials",
        join(work, "c.json"),
      ],
      { MDQ_LOG_LEVEL: "info", MDQ_ADMIN_PORT: String(await freePort()) },
    );
    try {
      for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 200))) {
        assert.equal(run.child.exitCode, null, run.stderr());
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        );
      }
      // Each request logs a line into the closed pipe.
      for (let i = 0; i < 5; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/livez`)).status, 200);
      const stopped = Date.now();
      run.child.kill("SIGTERM");
      assert.equal(await exitCode(run.child), 0);
      assert.ok(Date.now() - stopped < 5_000, `stopped in ${Date.now() - stopped} ms`);
      assert.doesNotMatch(run.stderr(), /EPIPE/);
    } finally {
      run.child.kill("SIGKILL");
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe("mdq serve on a taken port", () => {
  it("exits 1 within seconds with PostgreSQL and Redis, naming the listener, and never uses the closed pool", {
    timeout: 30_000,
  }, async () => {
    const work = await mkdtemp(join(tmpdir(), "mdq-serve-"));
    const database = await createTestDatabase("serve_taken");
    const holder = createServer();
    try {
      assert.equal((await runMdq(["migrate"], { MDQ_DATABASE_URL: database.url })).code, 0);
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
      const { port } = holder.address() as { port: number };
      const started = Date.now();
      const result = await runMdq(["serve", "--host", "127.0.0.1", "--port", String(port), "--data", work], {
        MDQ_DATABASE_URL: database.url,
        MDQ_REDIS_URL: "redis://127.0.0.1:6379",
        // Warnings (a key-ring reload on the closed pool) are logged at every level but silent.
        MDQ_LOG_LEVEL: "info",
      });
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^mdq: public listener: 127\.0\.0\.1:\d+ is in use; pass --port \(MDQ_PORT\)$/m,
      );
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      assert.doesNotMatch(result.stdout + result.stderr, /Cannot use a pool after calling end/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
      await database.drop();
      await rm(work, { recursive: true, force: true });
    }
  });
});
