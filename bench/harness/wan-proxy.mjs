#!/usr/bin/env node
// A throttling TCP proxy standing for the wide-area link between a brand and the region: every
// connection gets its own token bucket of `rate` bits/s in each direction and `rttMs / 2` of
// delay each way, as a client `rttMs` away behind a `rate` link would; with `shared`, every
// connection shares one link of `rate` each way, as the connections of one client behind its
// own access link do (a client with two requests in flight gets `rate`, not twice). It counts the bytes it
// carries each way (what went over the wire, compressed or not), read and reset on its stats port.
// Runs in a process of its own, so that neither the clients' nor the bench's event loop paces it.
//   node bench/harness/wan-proxy.mjs '{"target":"127.0.0.1:4000","rate":"50mbit","rtt":"40ms","shared":false}'
// prints one JSON line {port, statsPort} once listening; GET /stats on the stats port answers
// {up, down, connections} (bytes client → region, region → client), POST /reset zeroes them.
import { createServer as createHttpServer } from "node:http";
import { connect, createServer } from "node:net";

/** `50mbit`, `1gbit`, `800kbit`, `100000` (bits/s) as bits per second; throws on anything else. */
export function parseRate(text) {
  const match = /^(\d+(?:\.\d+)?)(kbit|mbit|gbit)?$/i.exec(String(text).trim());
  if (!match || Number(match[1]) <= 0) throw new Error(`a WAN rate is like 50mbit or 800kbit; got ${text}`);
  const unit = { kbit: 1e3, mbit: 1e6, gbit: 1e9 }[match[2]?.toLowerCase()] ?? 1;
  return Number(match[1]) * unit;
}

/** `40ms`, `0.04s`, `40` (ms) as milliseconds; throws on anything else. */
export function parseRtt(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s)?$/i.exec(String(text).trim());
  if (!match) throw new Error(`a WAN round trip is like 40ms or 0.1s; got ${text}`);
  return Number(match[1]) * (match[2]?.toLowerCase() === "s" ? 1000 : 1);
}

/** Bytes sent in one paced piece: small enough that the pacing is smooth at tens of Mbit/s. */
const PIECE_BYTES = 16 * 1024;
/** Bytes a direction may hold queued before its source is paused (backpressure). */
const QUEUE_LIMIT_BYTES = 1024 * 1024;

/**
 * One direction of one connection: bytes from `from` reach `to` in order, after the one-way
 * delay, no faster than `rate`; `count(n)` is told each piece handed to `to`. One FIFO and one
 * timer per direction: a timer per piece delivered pieces out of order when their times lay within
 * a millisecond (Node fires timers by the loop's cached millisecond clock), which corrupted
 * compressed answers and left HTTP parsers waiting for bytes that had already gone by.
 * Backpressure both ways: `from` is paused while more than QUEUE_LIMIT_BYTES wait here, and
 * delivery stops while `to`'s own buffer is full (until 'drain'). `from`'s end reaches `to` as
 * an end (a half-close) once everything before it is delivered.
 */
function pace(from, to, { rate, delayMs, count, wire }) {
  const queue = [];
  let queuedBytes = 0;
  let ended = false;
  let timer = null;
  let draining = false;
  const deliver = () => {
    timer = null;
    if (to.destroyed) return;
    while (queue.length > 0 && queue[0].at <= performance.now()) {
      const { piece } = queue.shift();
      queuedBytes -= piece.length;
      count(piece.length);
      if (!to.write(piece)) {
        draining = true;
        to.once("drain", () => {
          draining = false;
          deliver();
        });
        break;
      }
    }
    if (from.isPaused() && queuedBytes <= QUEUE_LIMIT_BYTES / 2) from.resume();
    if (draining) return;
    if (queue.length > 0) timer = setTimeout(deliver, Math.max(0, queue[0].at - performance.now()));
    else if (ended) to.end();
  };
  from.on("data", (chunk) => {
    for (let offset = 0; offset < chunk.length; offset += PIECE_BYTES) {
      const piece = chunk.subarray(offset, offset + PIECE_BYTES);
      // Serialisation on the link, then the propagation delay.
      wire.freeAt = Math.max(performance.now(), wire.freeAt) + (piece.length * 8 * 1000) / rate;
      queue.push({ piece, at: wire.freeAt + delayMs });
      queuedBytes += piece.length;
    }
    if (queuedBytes > QUEUE_LIMIT_BYTES) from.pause();
    if (timer === null && !draining) deliver();
  });
  from.on("end", () => {
    ended = true;
    if (timer === null && !draining) deliver();
  });
}

/** Starts the proxy; resolves to its port, its stats port and `close()`. */
export async function startWanProxy({ target, rate, rtt, shared = false }) {
  const [host, port] = target.split(":");
  const link = { rate: parseRate(rate), delayMs: parseRtt(rtt) / 2 };
  /** When each direction's link is next free to send (ms): one pair for all, or one per connection. */
  const newWires = () => ({ up: { freeAt: 0 }, down: { freeAt: 0 } });
  const sharedWires = shared ? newWires() : null;
  const stats = { up: 0, down: 0, connections: 0 };
  // Half-open on both sides: one side's end is forwarded as an end once its bytes are delivered,
  // while the other direction goes on (the proxy never closes a connection before its peer did).
  const server = createServer({ allowHalfOpen: true }, (client) => {
    stats.connections += 1;
    const region = connect({ port: Number(port), host, allowHalfOpen: true });
    client.setNoDelay(true);
    region.setNoDelay(true);
    // An error or a reset on either side resets the other: nothing is left half-done or open.
    // A clean close needs no forwarding: each direction's end already went through `pace`.
    const reset = () => {
      client.destroy();
      region.destroy();
    };
    for (const socket of [client, region]) {
      socket.on("error", reset);
      socket.on("close", (hadError) => {
        if (hadError) reset();
      });
    }
    const wires = sharedWires ?? newWires();
    pace(client, region, { ...link, wire: wires.up, count: (n) => (stats.up += n) });
    pace(region, client, { ...link, wire: wires.down, count: (n) => (stats.down += n) });
  });
  const statsServer = createHttpServer((request, response) => {
    if (request.method === "POST" && request.url === "/reset") {
      stats.up = 0;
      stats.down = 0;
      stats.connections = 0;
    }
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify(stats));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise((resolve) => statsServer.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    statsPort: statsServer.address().port,
    close() {
      server.close();
      statsServer.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const proxy = await startWanProxy(JSON.parse(process.argv[2] ?? "{}"));
  process.stdout.write(`${JSON.stringify({ port: proxy.port, statsPort: proxy.statsPort })}\n`);
  process.on("SIGTERM", () => process.exit(0));
}
