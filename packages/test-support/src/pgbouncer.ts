/**
 * PgBouncer (Debian's package) in transaction pooling mode, run as a child process with its own
 * directory, in front of any PostgreSQL servers (the read-replica tests put one in front of a
 * primary and its standby). The configuration is docs/deployment.md's: the session settings MDQ
 * sends at connect time are not forwarded by PgBouncer, so each server connection sets them
 * itself (`connect_query`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { serverAccount } from "./postgres-standby.js";
import { within } from "./wait.js";

/** Where Debian installs PgBouncer. */
export const PGBOUNCER = "/usr/sbin/pgbouncer";

/** A running PgBouncer. */
export interface PgBouncer {
  port: number;
  /** The URL of `database` on backend `backend` (the name given to `startPgBouncer`) through it. */
  url(backend: string, database: string): string;
  log(): string;
  stop(): Promise<void>;
}

/** A server PgBouncer pools: its name (the database alias prefix) and its port on 127.0.0.1. */
export interface PooledServer {
  name: string;
  port: number;
  /** The databases to pool on it. */
  databases: string[];
}

/**
 * What every server connection runs first: the settings MDQ otherwise sends as startup
 * parameters (`options`, `statement_timeout`), which PgBouncer 1.18 refuses or drops.
 */
export const PGBOUNCER_CONNECT_QUERY =
  "SET jit = off; SET enable_mergejoin = off; SET DateStyle = ISO; SET statement_timeout = 15000";

/** The configuration: transaction pooling, trust on loopback, startup parameters ignored. */
export function pgBouncerConfig(directory: string, port: number, servers: PooledServer[]): string {
  const databases = servers.flatMap((server) =>
    server.databases.map(
      (database) =>
        `${server.name}_${database} = host=127.0.0.1 port=${server.port} dbname=${database} user=postgres connect_query='${PGBOUNCER_CONNECT_QUERY}'`,
    ),
  );
  return `[databases]
${databases.join("\n")}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(directory, "users.txt")}
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
ignore_startup_parameters = extra_float_digits, options, statement_timeout
server_reset_query =
logfile = ${join(directory, "pgbouncer.log")}
pidfile = ${join(directory, "pgbouncer.pid")}
`;
}

/** Starts PgBouncer on a free port in front of `servers`. */
export async function startPgBouncer(servers: PooledServer[]): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER)) {
    throw new Error(
      `${PGBOUNCER} is missing: the replica tests need Debian's pgbouncer (apt-get install pgbouncer)`,
    );
  }
  const directory = mkdtempSync(join(tmpdir(), "mdq-pgbouncer-"));
  const port = await freePort();
  await writeFile(join(directory, "users.txt"), '"postgres" ""\n');
  await writeFile(join(directory, "pgbouncer.ini"), pgBouncerConfig(directory, port, servers));
  // PgBouncer refuses to run as root: it runs as the postgres account, like the servers.
  const account = serverAccount();
  if (account) chownSync(directory, account.uid, account.gid);
  let output = "";
  const child: ChildProcess = spawn(PGBOUNCER, [join(directory, "pgbouncer.ini")], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(account ?? {}),
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  };
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  await within(10_000, "pgbouncer listening", async () => {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output}`);
    return new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: "127.0.0.1", port }, () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  });
  return {
    port,
    url: (backend, database) => `postgres://postgres@127.0.0.1:${port}/${backend}_${database}`,
    log: () => output,
    async stop() {
      process.removeListener("exit", onExit);
      await stop();
    },
  };
}
