/**
 * `mdq serve` and other `mdq` runs as child processes, for tests that run several instances of a
 * region (scale-out) or kill one.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";

/**
 * The `mdq` binary (it sizes libuv's thread pool, then loads the compiled entry point), found from
 * the workspace's `@mdq/cli` package at run time (a compile-time import would make this package
 * depend on the CLI it tests).
 */
export const MDQ = fileURLToPath(import.meta.resolve("@mdq/cli/bin/mdq.cjs"));

const run = promisify(execFile);

/** The test's environment without the caller's MDQ_* settings, plus `extra`. */
export function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("MDQ_")));
  return { ...env, ...extra };
}

/** How an `mdq` run ended, with everything it printed. */
export interface MdqResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mdq` to completion (in `cwd`, if given); resolves with its exit code and output. */
export async function runMdq(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string } = {},
): Promise<MdqResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MDQ, ...args], {
      env: environment(env),
      cwd: options.cwd,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A running `mdq serve` child process. */
export interface ServeProcess {
  url: string;
  port: number;
  adminPort: number;
  dataDir: string;
  process: ChildProcess;
  log(): string;
  /** Sends `signal` and resolves with the exit code once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `mdq serve` on free ports with `env`, and resolves once `/readyz` answers 200 (or
 * rejects with the process's output after `timeoutMs`).
 */
export async function startServe(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  { timeoutMs = 20_000 } = {},
): Promise<ServeProcess> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawn(process.execPath, [MDQ, "serve", "--port", String(port), "--data", dataDir], {
    env: environment({ MDQ_ADMIN_PORT: String(adminPort), MDQ_LOG_LEVEL: "warn", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mdq serve exited with ${child.exitCode}: ${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() - started > timeoutMs) {
      child.kill("SIGKILL");
      throw new Error(`mdq serve not ready after ${timeoutMs} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    port,
    adminPort,
    dataDir,
    process: child,
    log: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, "exit");
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
