/**
 * Debian's headless Chromium (installed by scripts/ensure-test-tools.mjs), started here with a
 * fresh profile and driven over the DevTools protocol by playwright-core, which downloads no
 * browser of its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** A running Chromium and the DevTools connection to it. */
export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** Quiet, offline-friendly flags: no sandbox (tests run as root), no GPU, no calls home. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--remote-debugging-address=127.0.0.1",
  "--remote-debugging-port=0",
];

/** Resolves with the DevTools WebSocket URL Chromium prints on stderr once it listens. */
function devToolsUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`Chromium did not start in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      resolve(match[1]!);
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.stderr?.on("data", onData);
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`Chromium exited with ${code}:\n${output}`)));
  });
}

/** Starts Chromium with a fresh `--user-data-dir` and connects to it. */
export async function startChromium(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), "mdq-chromium-"));
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, "about:blank"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    // Chromium's helper processes may still write to the profile just after the browser exits
    // (an rmdir then fails with ENOTEMPTY): rm retries those errors.
    await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  try {
    const browser = await chromium.connectOverCDP(await devToolsUrl(child, 30_000));
    return {
      browser,
      async close() {
        await browser.close().catch(() => {});
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
