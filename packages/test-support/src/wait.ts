/** Polling for effects that land asynchronously (a change feed, a cache refresh). */

/** Polls `check` every 20 ms until it holds; returns the milliseconds it took, or throws after `timeoutMs`. */
export async function within(
  timeoutMs: number,
  what: string,
  check: () => Promise<boolean>,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
