// Bytes on the wire of this process's requests: what went over TCP each way (status lines, headers
// and bodies as sent, compressed or not), read from the sockets of undici (Node's fetch and the SDK's own undici announce
// each one it connects on the `undici:client:connected` diagnostics channel). Counted at the
// client, the same way on loopback and behind the WAN proxy.
import { subscribe } from "node:diagnostics_channel";

/** Every socket fetch has connected since this module was loaded (closed ones keep their counts). */
const sockets = new Set();
subscribe("undici:client:connected", ({ socket }) => sockets.add(socket));

/**
 * Bytes read (`down`) and written (`up`) by every fetch socket so far; the difference of two
 * readings is what went over the wire between them.
 * @example const before = wireBytes(); await walk(); const down = wireBytes().down - before.down;
 */
export function wireBytes() {
  let down = 0;
  let up = 0;
  for (const socket of sockets) {
    down += socket.bytesRead;
    up += socket.bytesWritten;
  }
  return { down, up };
}
