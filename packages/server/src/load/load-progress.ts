/**
 * How far a load has got, for `mdq load`'s progress bar (docs/admin-api.md, streamed loads): the
 * file's bytes read, then the rows checked, written and stored. DuckDB reports the progress of the
 * statement reading the file (its CSV and JSON readers count bytes); it is polled, never printed.
 */
import type { DuckDBConnection } from "@duckdb/node-api";

/** The steps of a load, in order. */
export type LoadPhase = "reading" | "checking" | "writing" | "replacing";

/** One progress report of a load. */
export interface LoadProgress {
  phase: LoadPhase;
  /** Bytes of the file read so far (all of them once reading is done). */
  bytesRead: number;
  totalBytes: number;
  /** Records in the file, once it has been read; null before. */
  rows: number | null;
}

/** Receives progress reports; never throws into the load. */
export type LoadProgressListener = (progress: LoadProgress) => void;

const POLL_MS = 250;

/**
 * Reports a load's progress to `listener` while `work` runs: `reading` from DuckDB's progress of
 * the running statement on `connection`, until `work` says the file is read.
 */
export class LoadProgressReporter {
  private progress: LoadProgress;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly listener: LoadProgressListener | undefined,
    totalBytes: number,
  ) {
    this.progress = { phase: "reading", bytesRead: 0, totalBytes, rows: null };
  }

  /** Starts polling DuckDB's progress of the statement reading the file on `connection`. */
  async watchReading(connection: DuckDBConnection): Promise<void> {
    if (!this.listener) return;
    await connection.run("SET enable_progress_bar = true");
    await connection.run("SET enable_progress_bar_print = false");
    this.emit();
    this.timer = setInterval(() => {
      const percentage = connection.progress.percentage;
      if (this.progress.phase !== "reading" || !(percentage > 0)) return;
      const bytesRead = Math.min(
        this.progress.totalBytes,
        Math.round((percentage / 100) * this.progress.totalBytes),
      );
      if (bytesRead <= this.progress.bytesRead) return;
      this.progress = { ...this.progress, bytesRead };
      this.emit();
    }, POLL_MS);
    this.timer.unref();
  }

  /** The file is read: it holds `rows` records; what follows is `phase`. */
  read(rows: number, phase: LoadPhase = "checking"): void {
    this.stop();
    this.progress = { ...this.progress, bytesRead: this.progress.totalBytes, rows, phase };
    this.emit();
  }

  /** The load moved on to `phase`. */
  phase(phase: LoadPhase): void {
    this.progress = { ...this.progress, phase };
    this.emit();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private emit(): void {
    try {
      this.listener?.({ ...this.progress });
    } catch {
      // A listener's failure (a closed socket) never fails the load.
    }
  }
}
