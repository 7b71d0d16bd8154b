/**
 * Whether a request's client is still there: its response's connection closed before the
 * response was finished means the client left (it disconnected, or timed out and gave up), so
 * work not yet started for it is work for nobody. Node emits `close` on the response both when it
 * finished and when its connection ended first; only the second aborts.
 */
import type { FastifyReply } from "fastify";

/**
 * A signal aborted once the client of `reply`'s request leaves before its response is finished
 * (limits/request-lanes.ts drops a queued request on it).
 * @example const release = await lanes.enter("heavy", brandId, clientGoneSignal(reply));
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const response = reply.raw;
  const gone = () => {
    if (!response.writableFinished) controller.abort();
  };
  if (response.destroyed) gone();
  else response.once("close", gone);
  return controller.signal;
}
