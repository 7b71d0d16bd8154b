/**
 * The instance's export slots (`MDQ_EXPORT_CONCURRENCY`): an export holds a database connection
 * and a snapshot for as long as its client reads, so at most N run at once on an instance; one
 * more is refused with 429 before any store work, and retried by the client after `Retry-After`.
 */

/** Seconds a refused export is told to wait before it tries again. */
export const EXPORT_RETRY_AFTER_SECONDS = 5;

/** Counts the exports running on this instance. */
export class ExportSlots {
  private used = 0;

  constructor(readonly max: number) {}

  /** Exports running now. */
  get inUse(): number {
    return this.used;
  }

  /** Takes a slot and returns its release (idempotent), or null when every slot is taken. */
  tryAcquire(): (() => void) | null {
    if (this.used >= this.max) return null;
    this.used += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
    };
  }
}
