#!/usr/bin/env node
// A throttling TCP proxy standing for the wide-area link between a brand and the region: every
// connection gets its own token bucket of `rate` bits/s in each direction and `rttMs / 2` of
// delay each way, as a client `rttMs` away behind a `rate` link would. It counts the bytes it
// carries each way (what went over the wire, compressed or not), read and reset on its stats port.
// Runs in a process of its own, so that neither the clients' nor the bench's event loop paces it.
//   node bench/harness/wan-proxy.mjs '{"target":"127.0.0.1:4000","rate":"50mbit","rtt":"40ms"}'
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
 * One direction of one connection: bytes from `from` reach `to` after the one-way delay, no
 * faster than `rate`; `count(n)` is told each piece sent.
 */
function pace(from, to, { rate, delayMs, count }) {
  let linkFreeAt = 0;
  let queued = 0;
  let ended = false;
  let pending = 0;
  const finish = () => {
    if (ended && pending === 0) to.end();
  };
  from.on("data", (chunk) => {
    for (let offset = 0; offset < chunk.length; offset += PIECE_BYTES) {
      const piece = chunk.subarray(offset, offset + PIECE_BYTES);
      const now = performance.now();
      // Serialisation on the link, then the propagation delay.
      linkFreeAt = Math.max(now, linkFreeAt) + (piece.length * 8 * 1000) / rate;
      const deliverAt = linkFreeAt + delayMs;
      queued += piece.length;
      pending += 1;
      setTimeout(
        () => {
          queued -= piece.length;
          pending -= 1;
          count(piece.length);
          if (!to.destroyed) to.write(piece);
          if (queued < QUEUE_LIMIT_BYTES / 2 && from.isPaused()) from.resume();
          finish();
        },
        Math.max(0, deliverAt - now),
      );
    }
    if (queued > QUEUE_LIMIT_BYTES) from.pause();
  });
  from.on("end", () => {
    ended = true;
    finish();
  });
}

/** Starts the proxy; resolves to its port, its stats port and `close()`. */
export async function startWanProxy({ target, rate, rtt }) {
  const [host, port] = target.split(":");
  const link = { rate: parseRate(rate), delayMs: parseRtt(rtt) / 2 };
  const stats = { up: 0, down: 0, connections: 0 };
  const server = createServer((client) => {
    stats.connections += 1;
    const region = connect(Number(port), host);
    client.setNoDelay(true);
    region.setNoDelay(true);
    const close = () => {
      client.destroy();
      region.destroy();
    };
    client.on("error", close);
    region.on("error", close);
    client.on("close", close);
    region.on("close", close);
    pace(client, region, { ...link, count: (n) => (stats.up += n) });
    pace(region, client, { ...link, count: (n) => (stats.down += n) });
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
