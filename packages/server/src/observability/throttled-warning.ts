/**
 * A warning logged at most once per interval: while a dependency is down, every request meets the
 * same failure, and one line per request would bury everything else in the log.
 */

/** The logger shape the service passes around (pino's). */
export interface WarningLogger {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

/** Logs `warn` at most once per `intervalMs`, counting what it held back. */
export class ThrottledWarning {
  private lastLoggedAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly log: WarningLogger | undefined,
    private readonly message: string,
    private readonly intervalMs = 30_000,
  ) {}

  /** Logs `details` now, or counts it until the interval has passed. */
  warn(details: object, now = Date.now()): void {
    if (now - this.lastLoggedAt < this.intervalMs) {
      this.suppressed += 1;
      return;
    }
    this.log?.warn({ ...details, suppressedSinceLast: this.suppressed }, this.message);
    this.lastLoggedAt = now;
    this.suppressed = 0;
  }

  /** Logs that the condition ended (once), and re-arms the warning. */
  recovered(message: string): void {
    if (this.lastLoggedAt === Number.NEGATIVE_INFINITY) return;
    this.log?.info({ suppressedSinceLast: this.suppressed }, message);
    this.lastLoggedAt = Number.NEGATIVE_INFINITY;
    this.suppressed = 0;
  }
}

/**
 * A failure's reason as safe to log: its code (ECONNREFUSED, ETIMEDOUT …) or its message with any
 * connection URL cut out, since URLs may carry a password.
 */
export function safeReason(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  const cleaned = message.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>");
  return typeof code === "string" && !cleaned.includes(code) ? `${code}: ${cleaned}` : cleaned;
}
