/**
 * One sync per output file at a time: `<out>.lock` holds the pid of the sync writing `<out>`.
 * Two runs (a cron job still waiting for readiness when the next one starts) would otherwise
 * interleave pages in one partial file. A lock left by a killed process is taken over.
 */
import { open, readFile, rm } from "node:fs/promises";

/** Another live process is syncing to the same file. */
export class SyncLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly pid: number,
  ) {
    super(`another sync to this file is running (pid ${pid}, lock ${lockPath})`);
    this.name = "SyncLockedError";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the lock at `path`; returns the function that releases it. */
export async function acquireSyncLock(path: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = Number.parseInt(await readFile(path, "utf8").catch(() => ""), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new SyncLockedError(path, pid);
      }
      await rm(path, { force: true });
    }
  }
  throw new SyncLockedError(path, Number.NaN);
}
