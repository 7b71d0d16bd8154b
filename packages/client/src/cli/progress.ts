/**
 * The progress of every long command (`export`, `sync`, `mirror`) on stderr, by one rule: a
 * one-line bar redrawn in place on a terminal; elsewhere (cron, systemd, CI, a pipe) a plain log
 * line at most every 5 s, so that logs stay readable whatever the range, and a summary line at the
 * end. Each command names only what it does: rows for all, the GraphQL pages and windows a sync
 * reads, the days a mirror writes; an export is one request and counts rows alone.
 */

/** What a run is stepping through, when it has steps: a sync's windows, a mirror's days. */
export interface ProgressStep {
  name: "window" | "day";
  /** 1-based step being worked on (or the last one done). */
  at: number;
  of: number;
}

/** Where a run stands. `totalRows` is exact when `totalExact`, else an estimate. */
export interface ProgressSnapshot {
  rows: number;
  totalRows: number;
  totalExact: boolean;
  /** Pages of records read, when the run reads pages (sync). */
  pages?: number;
  step?: ProgressStep;
  /** Rows that were already in the file when this run started (a resume). */
  resumedRows: number;
  startedAt: number;
}

/** What a command tells the user while it works. */
export interface ProgressReporter {
  /** After each piece of work written (a page, a chunk of the body, a day). */
  update(snapshot: ProgressSnapshot): void;
  /** A line that is always shown: something changed what the run does (resumed, restarted, waiting). */
  note(message: string): void;
  /** The run finished; the bar (if any) gives way to a summary line. */
  done(message: string): void;
}

/** The interval between log lines off a terminal. */
export const LOG_INTERVAL_MS = 5_000;

/** `1234567` → `1,234,567`. */
export function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** Seconds as `1:05:09` or `5:09`; `--:--` when unknown. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "--:--";
  const whole = Math.round(seconds);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

/** Rows per second fetched by this run, and the seconds left at that rate. */
function pace(snapshot: ProgressSnapshot, now: number) {
  const elapsed = (now - snapshot.startedAt) / 1000;
  const fetched = snapshot.rows - snapshot.resumedRows;
  const rate = elapsed > 0 ? fetched / elapsed : 0;
  const left = Math.max(0, snapshot.totalRows - snapshot.rows);
  return { elapsed, rate, eta: rate > 0 ? left / rate : Number.NaN };
}

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** `12,000/~40,000 rows | 3 pages | window 2/5`: what the snapshot counts, joined by `separator`. */
function counted(snapshot: ProgressSnapshot, separator: string): string {
  const about = snapshot.totalExact ? "" : "~";
  const parts = [`${count(snapshot.rows)}/${about}${count(snapshot.totalRows)} rows`];
  if (snapshot.pages !== undefined) parts.push(`${count(snapshot.pages)} pages`);
  if (snapshot.step !== undefined)
    parts.push(`${snapshot.step.name} ${snapshot.step.at}/${snapshot.step.of}`);
  return parts.join(separator);
}

/** A bar redrawn at most every `intervalMs` on a terminal. */
export function terminalProgress(output: Output, intervalMs = 100): ProgressReporter {
  let lastDraw = 0;
  let drawn = false;
  const clear = () => {
    if (drawn) output.write("\r\x1b[2K");
    drawn = false;
  };
  const draw = (snapshot: ProgressSnapshot) => {
    const now = Date.now();
    if (now - lastDraw < intervalMs) return;
    lastDraw = now;
    const { rate, eta } = pace(snapshot, now);
    const ratio = snapshot.totalRows > 0 ? Math.min(1, snapshot.rows / snapshot.totalRows) : 0;
    const text =
      ` ${Math.floor(ratio * 100)}% ${counted(snapshot, " | ")}` +
      ` | ${count(rate)} rows/s | ETA ${duration(eta)}`;
    // A line longer than the terminal wraps, and `\r` then redraws only its last part.
    const columns = (output.columns ?? 80) - 1;
    const width = Math.min(30, columns - text.length - 2);
    const filled = Math.round(ratio * Math.max(0, width));
    const line =
      width >= 10
        ? `[${"#".repeat(filled)}${"-".repeat(width - filled)}]${text}`
        : text.slice(1, columns + 1);
    output.write(`\r\x1b[2K${line}`);
    drawn = true;
  };
  return {
    update: draw,
    note(message) {
      clear();
      output.write(`mdq-client: ${message}\n`);
    },
    done(message) {
      clear();
      output.write(`mdq-client: ${message}\n`);
    },
  };
}

/**
 * Log lines, at most one every `intervalMs`, so a year's backfill (366 days, hundreds of windows
 * or pages) writes a handful of lines, not one per step; the summary is always shown.
 */
export function logProgress(output: Output, intervalMs = LOG_INTERVAL_MS): ProgressReporter {
  let lastLine = Date.now();
  return {
    update(snapshot) {
      const now = Date.now();
      if (now - lastLine < intervalMs) return;
      lastLine = now;
      const { rate, eta } = pace(snapshot, now);
      output.write(`mdq-client: ${counted(snapshot, ", ")}, ${count(rate)} rows/s, ETA ${duration(eta)}\n`);
    },
    note: (message) => output.write(`mdq-client: ${message}\n`),
    done: (message) => output.write(`mdq-client: ${message}\n`),
  };
}

/** Says nothing but the final line (`--quiet`). */
export function quietProgress(output: Output): ProgressReporter {
  return {
    update() {},
    note() {},
    done: (message) => output.write(`mdq-client: ${message}\n`),
  };
}

/** The bar on a terminal, log lines otherwise. */
export function progressFor(output: Output, options: { quiet?: boolean } = {}): ProgressReporter {
  if (options.quiet) return quietProgress(output);
  return output.isTTY ? terminalProgress(output) : logProgress(output);
}
