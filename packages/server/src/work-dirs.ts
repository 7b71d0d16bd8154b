/**
 * The private directories a process works in, in the system's temporary folder: a load's checked
 * files and named pipe (load/copy-pipe.ts) and its scratch database's spill, an upload's body, an
 * export's windows. Each is named with its process's pid (`mdq-<purpose>-<pid>-…`) and removed
 * when its work ends; a process killed mid-way (kill -9 during a load: up to the file's size, a
 * gigabyte for 10 M rows) cannot, so a service that starts removes those whose process is gone
 * (`sweepWorkDirs`).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What a work directory is for: the second part of its name. */
export type WorkPurpose = "load" | "upload" | "scratch" | "export";

/** A work directory's name: its purpose, then the pid of the process that made it. */
const WORK_DIR = /^mdq-(?:load|upload|scratch|export)-(\d+)-/;

/** Makes a new work directory for `purpose`, named with this process's pid. */
export function makeWorkDir(purpose: WorkPurpose): Promise<string> {
  return mkdtemp(join(tmpdir(), `mdq-${purpose}-${process.pid}-`));
}

/** Whether process `pid` runs (EPERM says it does, as another user's). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Removes the work directories whose process no longer runs; returns their names. A directory of
 * a running process (this one, another instance, or a process that took a dead one's pid) is left.
 */
export async function sweepWorkDirs(folder = tmpdir()): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const gone = names.filter((name) => {
    const pid = WORK_DIR.exec(name)?.[1];
    return pid !== undefined && !running(Number(pid));
  });
  await Promise.all(gone.map((name) => rm(join(folder, name), { recursive: true, force: true })));
  return gone;
}
