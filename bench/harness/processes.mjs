// Child processes of the harness: contenders on free ports, the load generator, and the memory
// readings of a server process from /proc.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";

const DRIVE = new URL("./drive.mjs", import.meta.url).pathname;

/** A port nothing listens on now. */
export async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

/** Waits until `url` answers any HTTP status; throws with the log's tail if the process died. */
async function waitForHttp(url, child, logFile, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const log = await readFile(logFile, "utf8").catch(() => "");
      throw new Error(`${url}: the process exited with ${child.exitCode}:\n${log.slice(-2000)}`);
    }
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer within ${seconds} s (log: ${logFile})`);
}

/**
 * Starts a contender: `command args` with `env`, stdout and stderr to `<logDir>/<name>.log`,
 * ready once `readyUrl` answers. Returns its pid and a `stop()`.
 */
export async function startContender({ name, command, args, env, readyUrl, logDir }) {
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  await waitForHttp(readyUrl, child, logFile);
  return {
    name,
    pid: child.pid,
    logFile,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await once(child, "exit");
      clearTimeout(timer);
    },
  };
}

/** Runs one load in the load-generator process; resolves to its JSON summary. */
export function driveLoad(spec) {
  return runJsonProcess(DRIVE, spec);
}

/**
 * Runs a harness script (`drive.mjs`, `walk.mjs`) in a process of its own with `spec` as its JSON
 * argument and `env` beside this process's environment; resolves to the JSON of its last stdout line.
 */
export async function runJsonProcess(script, spec, env = {}) {
  const child = spawn(process.execPath, [script, JSON.stringify(spec)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${script} failed (${code}): ${stderr.slice(-2000)}`);
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/**
 * CPU time `pid` has used so far (user + system; all its threads, or only `thread`: the main
 * thread's id is the pid), in ms; undefined when it is gone.
 */
export async function cpuMs(pid, thread) {
  const stat = await readFile(
    thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
    "utf8",
  ).catch(() => "");
  // Fields after the command (which may hold spaces) start after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? ticks * 10 : undefined;
}

/** A line of /proc/<pid>/status in kB (VmRSS, VmHWM), or undefined when the process is gone. */
export async function statusKb(pid, field) {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return match ? Number(match[1]) : undefined;
}

/**
 * Resets the peak resident set size of `pid` (`echo 5 > /proc/<pid>/clear_refs`, Linux ≥ 4.0), so
 * that VmHWM afterwards is the peak of what follows. Returns whether the kernel allowed it.
 */
export async function resetPeakRss(pid) {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Samples VmRSS of `pid` every `everyMs` until `stop()`; resolves to the highest sample in kB. */
export function sampleRss(pid, everyMs = 50) {
  let highest = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      highest = Math.max(highest, (await statusKb(pid, "VmRSS")) ?? 0);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    return highest;
  })();
  return {
    stop() {
      running = false;
      return done;
    },
  };
}

/** The machine a run is on, for its results file (the load average now: call again at the end). */
export function machine() {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model.trim(),
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    node: process.versions.node,
    loadAverageAtStart: loadavg()[0],
  };
}
