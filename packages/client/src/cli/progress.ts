/**
 * Progress of a sync, on stderr: a one-line bar redrawn in place on a terminal (rows, pages,
 * rate, ETA), plain log lines otherwise (cron, systemd, CI), so logs stay readable.
 */

/** Where a sync stands. `totalRows` is exact once every window's first page has been read. */
export interface ProgressSnapshot {
  rows: number;
  pages: number;
  totalRows: number;
  totalExact: boolean;
  /** 1-based window being read, and how many there are. */
  window: number;
  windows: number;
  /** Rows that were already in the file when this run started (a resume). */
  resumedRows: number;
  startedAt: number;
}

/** What sync.ts tells the user while it works. */
export interface ProgressReporter {
  /** After each page written. */
  update(snapshot: ProgressSnapshot): void;
  /** After each window written in full. */
  windowDone(snapshot: ProgressSnapshot, window: { from: string; to: string; rows: number }): void;
  /** A line that is always shown (resumed, restarted a window, converting…). */
  note(message: string): void;
  /** The sync finished; the bar (if any) gives way to a summary line. */
  done(snapshot: ProgressSnapshot, message: string): void;
}

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

/** A bar redrawn at most every `intervalMs` on a terminal. */
export function terminalProgress(output: Output, intervalMs = 100): ProgressReporter {
  let lastDraw = 0;
  let drawn = false;
  const clear = () => {
    if (drawn) output.write("\r\x1b[2K");
    drawn = false;
  };
  const draw = (snapshot: ProgressSnapshot, force: boolean) => {
    const now = Date.now();
    if (!force && now - lastDraw < intervalMs) return;
    lastDraw = now;
    const { rate, eta } = pace(snapshot, now);
    const ratio = snapshot.totalRows > 0 ? Math.min(1, snapshot.rows / snapshot.totalRows) : 0;
    const about = snapshot.totalExact ? "" : "~";
    const text =
      ` ${Math.floor(ratio * 100)}% ${count(snapshot.rows)}/${about}${count(snapshot.totalRows)} rows` +
      ` | ${count(snapshot.pages)} pages | window ${snapshot.window}/${snapshot.windows}` +
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
    update: (snapshot) => draw(snapshot, false),
    windowDone: (snapshot) => draw(snapshot, true),
    note(message) {
      clear();
      output.write(`mdq-client: ${message}\n`);
    },
    done(_snapshot, message) {
      clear();
      output.write(`mdq-client: ${message}\n`);
    },
  };
}

/**
 * Log lines, at most one every `intervalMs` (a window done or a page batch), so a year's backfill
 * in small windows does not flood the log; the last window and the summary are always shown.
 */
export function logProgress(output: Output, intervalMs = 5_000): ProgressReporter {
  let lastLine = 0;
  const line = (snapshot: ProgressSnapshot, what: string) => {
    const now = Date.now();
    lastLine = now;
    const { rate, eta } = pace(snapshot, now);
    const about = snapshot.totalExact ? "" : "~";
    output.write(
      `mdq-client: ${what}: ${count(snapshot.rows)}/${about}${count(snapshot.totalRows)} rows, ` +
        `${count(snapshot.pages)} pages, ${count(rate)} rows/s, ETA ${duration(eta)}\n`,
    );
  };
  return {
    update(snapshot) {
      if (Date.now() - lastLine >= intervalMs)
        line(snapshot, `window ${snapshot.window}/${snapshot.windows}`);
    },
    windowDone(snapshot, window) {
      if (Date.now() - lastLine >= intervalMs || snapshot.window === snapshot.windows) {
        line(snapshot, `window ${snapshot.window}/${snapshot.windows} (${window.from}..${window.to}) done`);
      }
    },
    note: (message) => output.write(`mdq-client: ${message}\n`),
    done: (_snapshot, message) => output.write(`mdq-client: ${message}\n`),
  };
}

/** Says nothing but the final line (`--quiet`). */
export function quietProgress(output: Output): ProgressReporter {
  return {
    update() {},
    windowDone() {},
    note() {},
    done: (_snapshot, message) => output.write(`mdq-client: ${message}\n`),
  };
}

/** The bar on a terminal, log lines otherwise. */
export function progressFor(output: Output, options: { quiet?: boolean } = {}): ProgressReporter {
  if (options.quiet) return quietProgress(output);
  return output.isTTY ? terminalProgress(output) : logProgress(output);
}
