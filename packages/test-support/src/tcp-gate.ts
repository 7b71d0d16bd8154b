/**
 * A TCP forwarder between the service and Redis or PostgreSQL, so that a test can take the
 * server "down" for real from the service's point of view without stopping the machine's server
 * that other tests use: `block()` cuts every connection and refuses new ones, `stall()` cuts them
 * and holds new ones without forwarding a byte, `freeze()` keeps every connection open but
 * forwards nothing (a server that stopped answering mid-conversation), `open()` forwards again.
 */
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";

/** What the gate does with connections now. */
export type GateState = "open" | "blocked" | "stalled" | "frozen";

/** A gate in front of a TCP server, and the switches that fail it. */
export interface TcpGate {
  /** `host:port` to hand to the service instead of the real one. */
  readonly address: string;
  readonly port: number;
  state: GateState;
  open(): void;
  block(): void;
  stall(): void;
  freeze(): void;
  close(): Promise<void>;
}

/** Starts a gate on a free port of 127.0.0.1 forwarding to `targetHost:targetPort`. */
export async function startTcpGate(targetHost: string, targetPort: number): Promise<TcpGate> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  /** Copies `from` to `to` unless the gate is frozen (then bytes are dropped). */
  const forward = (from: Socket, to: Socket) => {
    from.on("data", (chunk) => {
      if (gate.state === "open") to.write(chunk);
    });
    from.once("close", () => to.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (gate.state === "blocked") {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no gate port");
  const gate: TcpGate = {
    address: `127.0.0.1:${address.port}`,
    port: address.port,
    state: "open",
    open() {
      // Bytes dropped while frozen or stalled leave both ends out of step: start afresh.
      if (gate.state !== "open" && gate.state !== "blocked") cutAll();
      gate.state = "open";
    },
    block() {
      gate.state = "blocked";
      cutAll();
    },
    stall() {
      gate.state = "stalled";
      cutAll();
    },
    freeze() {
      gate.state = "frozen";
    },
    async close() {
      cutAll();
      server.close();
    },
  };
  return gate;
}
