/**
 * `mdq load`'s progress bar on a terminal (cli-progress): the file's bytes read, then the rows
 * checked, written and stored, with rows per second and the time left, from the service's
 * progress reports (a streamed `POST /admin/loads`, docs/admin-api.md).
 */
import { SingleBar } from "cli-progress";

/** A progress report of the service (`LoadProgress` of the server). */
export interface LoadProgressReport {
  phase: "reading" | "checking" | "writing" | "replacing";
  bytesRead: number;
  totalBytes: number;
  rows: number | null;
}

const PHASE_NAMES: Record<LoadProgressReport["phase"], string> = {
  reading: "reading  ",
  checking: "checking ",
  writing: "writing  ",
  replacing: "replacing",
};

/** Bytes as MB with one decimal. */
const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * Runs `load`, drawing its progress on `stream` (a terminal) until it ends; the bar is cleared
 * either way, so that the summary or the error is what stays on the screen.
 */
export async function withLoadProgress<T>(
  stream: NodeJS.WriteStream,
  load: (onProgress: (progress: LoadProgressReport) => void) => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const bar = new SingleBar({
    stream,
    clearOnComplete: true,
    hideCursor: true,
    etaBuffer: 20,
    format:
      "{phase} [{bar}] {percentage}% | {read} of {size} | {rows} rows | {rate} rows/s | ETA {eta_formatted}",
  });
  let barShown = false;
  const onProgress = (progress: LoadProgressReport) => {
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const payload = {
      phase: PHASE_NAMES[progress.phase],
      read: megabytes(progress.bytesRead),
      size: megabytes(progress.totalBytes),
      rows: progress.rows === null ? "?" : progress.rows.toLocaleString("en"),
      rate: progress.rows === null ? "?" : Math.round(progress.rows / seconds).toLocaleString("en"),
    };
    const total = Math.max(progress.totalBytes, 1);
    if (!barShown) {
      bar.start(total, progress.bytesRead, payload);
      barShown = true;
    } else bar.update(progress.bytesRead, payload);
  };
  try {
    return await load(onProgress);
  } finally {
    if (barShown) bar.stop();
  }
}
