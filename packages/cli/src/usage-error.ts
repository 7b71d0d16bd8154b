/** A mistake in how a command was called; `mdq` exits 2 with its message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
