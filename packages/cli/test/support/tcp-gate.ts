/**
 * A TCP forwarder that stands between the service and PostgreSQL or Redis, so a test can take the
 * database "down" for real from the service's point of view: `block()` cuts every open connection
 * and refuses new ones (connection reset), `stall()` holds new connections without forwarding a
 * byte (a database that stopped answering), `open()` forwards again.
 */
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";

export type GateState = "open" | "blocked" | "stalled";

export interface TcpGate {
  /** `host:port` to hand to the service instead of the real one. */
  readonly address: string;
  readonly port: number;
  state: GateState;
  open(): void;
  block(): void;
  stall(): void;
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
  const server: Server = createServer((client) => {
    track(client);
    if (gate.state === "blocked") {
      client.resetAndDestroy();
      return;
    }
    if (gate.state === "stalled") return;
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
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
    async close() {
      cutAll();
      server.close();
    },
  };
  return gate;
}
