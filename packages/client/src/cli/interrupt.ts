/**
 * SIGINT and SIGTERM stop a command between two requests instead of mid-write: the first one
 * aborts the command's signal (a sync keeps its checkpoint and exits 130 or 143); a second one
 * exits at once (the checkpoint is still valid: it is only ever replaced atomically).
 */

const controller = new AbortController();

/** The signal commands pass to the SDK, and which process signal fired it. */
export const interruption: { signal: AbortSignal; received: NodeJS.Signals | undefined } = {
  signal: controller.signal,
  received: undefined,
};

/** Installs the handlers (once, by main.ts). */
export function handleInterruptions(): void {
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.on(name, () => {
      if (interruption.received !== undefined) process.exit(name === "SIGINT" ? 130 : 143);
      interruption.received = name;
      controller.abort(new Error(`interrupted by ${name}`));
    });
  }
}
