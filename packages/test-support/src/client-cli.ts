/**
 * Runs `mdq-client` (the built `dist/src/cli/main.js`) as a process against a real service on a
 * loopback port (running-service.ts), with the credentials in its environment only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { graphqlOn, tokenFrom } from "./inject-calls.js";
import type { RunningService } from "./running-service.js";

/**
 * The built CLI entry point, found from the workspace's `mdq-client` package at run time (a
 * compile-time import would make this package depend on the client it tests).
 */
export const CLI_MAIN = fileURLToPath(new URL("./cli/main.js", import.meta.resolve("mdq-client")));

/** How an `mdq-client` run ended, with everything it printed. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment `mdq-client` reads, for a demo app (the first by default). */
export function cliEnv(
  running: RunningService,
  options: { appIndex?: number; overrides?: Record<string, string | undefined> } = {},
): NodeJS.ProcessEnv {
  const app = running.credentials.apps[options.appIndex ?? 0]!;
  return {
    PATH: process.env.PATH,
    MDQ_APP_CLIENT_ID: app.appClientId,
    MDQ_APP_CLIENT_SECRET: app.appClientSecret,
    MDQ_BRAND_CLIENT_ID: app.brandClientId,
    MDQ_AUTH_URL: running.url,
    MDQ_BASE_URL: running.url,
    ...options.overrides,
  };
}

/** Starts `mdq-client <args>`; stdout and stderr are collected into the returned promise's result. */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Runs `mdq-client <args>` to its end. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return startCli(args, env).done;
}

/** The parsed JSON file at `path`, or undefined while it does not exist or is being replaced. */
export function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/**
 * Polls `path` (a JSON file) as fast as the event loop allows until `ready` holds for its content,
 * then sends SIGKILL: nothing of the process's own clean-up runs. Resolves false if the process
 * ended first.
 */
export function killWhen<T>(
  child: ChildProcess,
  path: string,
  ready: (content: T) => boolean,
): Promise<boolean> {
  return new Promise((resolve) => {
    let exited = false;
    child.once("exit", () => {
      exited = true;
    });
    const poll = () => {
      if (exited) return resolve(false);
      const content = readJson<T>(path);
      if (content !== undefined && ready(content)) {
        child.kill("SIGKILL");
        return resolve(true);
      }
      setImmediate(poll);
    };
    poll();
  });
}

/** POSTs a GraphQL query to the service itself (not through the CLI), as the given demo app. */
export async function serviceQuery(
  running: RunningService,
  query: string,
  variables: Record<string, unknown>,
  appIndex = 0,
): Promise<{
  data: Record<string, unknown>;
  extensions?: { pageInfo?: Record<string, { totalCount: number }> };
}> {
  const token = await tokenFrom(running.service, running.credentials.apps[appIndex]!);
  const response = await graphqlOn(running.service, token, query, variables);
  const body = response.json();
  if (response.statusCode !== 200 || body.errors) throw new Error(`query failed: ${response.body}`);
  return body;
}
