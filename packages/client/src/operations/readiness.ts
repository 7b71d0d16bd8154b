/** `marketingDataReadiness` for one date, and polling it until the data is ready. */
import { checkReadiness } from "../answer-validation.js";
import { MdqClientError } from "../errors.js";
import { READINESS_QUERY } from "../queries.js";
import type { Clock, Readiness, WaitUntilReadyOptions } from "../types.js";
import type { WalkService } from "../walk-types.js";
import { positive } from "./option-checks.js";

/** The readiness of `date` (the region's today when omitted). */
export async function readiness(
  service: Pick<WalkService, "graphql">,
  brandClientId: string,
  date: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Readiness> {
  const result = await service.graphql(
    READINESS_QUERY,
    { clientId: brandClientId, ...(date === undefined ? {} : { date }) },
    signal,
  );
  return checkReadiness(result.data["marketingDataReadiness"], date);
}

/**
 * Asks `readinessOf` every `interval` ms until `READY` and returns that answer; fails with
 * NOT_READY after `timeout` ms, or ABORTED when `signal` fires.
 */
export async function waitUntilReady(
  readinessOf: (date: string | undefined, signal: AbortSignal | undefined) => Promise<Readiness>,
  clock: Clock,
  options: WaitUntilReadyOptions,
): Promise<Readiness> {
  const interval = positive(options.interval, 300_000, "interval");
  const deadline = options.timeout === undefined ? Number.POSITIVE_INFINITY : clock.now() + options.timeout;
  for (;;) {
    const answer = await readinessOf(options.date, options.signal);
    if (answer.status === "READY") return answer;
    const now = clock.now();
    if (now >= deadline) {
      throw new MdqClientError("NOT_READY", `the data for ${answer.date} is still not ready`);
    }
    await clock.sleep(Math.min(interval, deadline - now), options.signal);
  }
}
