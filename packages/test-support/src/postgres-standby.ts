/**
 * A private PostgreSQL primary with streaming standbys, for the read-replica tests: `initdb` run
 * as the `postgres` OS user into a temporary directory, a `replication` line in pg_hba.conf,
 * `pg_basebackup -R` per standby, `pg_ctl` on free ports, `hot_standby = on`. The machine's own
 * server has no replication line, and a test must be free to pause, delay, kill and restart a
 * standby. Everything is stopped and removed by `stop()` (and by `exit` if a test dies first).
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";

/** Where Debian installs PostgreSQL 15's programs. */
export const POSTGRES_BIN = "/usr/lib/postgresql/15/bin";
/** The superuser of the private servers (initdb's `-U`). */
export const STANDBY_PAIR_USER = "postgres";

/** The OS account the servers (and PgBouncer) run as when we are root: both refuse to run as root. */
export function serverAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  // Debian's postgres package creates the account; its ids are read, not assumed.
  const ids = (flag: string) => Number(runSync("id", [flag, "postgres"]).trim());
  return { uid: ids("-u"), gid: ids("-g") };
}

function runSync(command: string, args: string[], account?: { uid: number; gid: number }): string {
  const result = spawnSync(command, args, { encoding: "utf8", ...(account ?? {}) });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

/** Runs a PostgreSQL program as the server's account; rejects with its output when it fails. */
export function runAsPostgres(program: string, args: string[]): Promise<string> {
  const account = serverAccount();
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      stdio: ["ignore", "pipe", "pipe"],
      ...(account ?? {}),
      env: { ...process.env, LC_ALL: "C.UTF-8" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${program} ${args.join(" ")}: ${output}`)),
    );
  });
}

/** One server of the pair. */
export interface PairServer {
  port: number;
  dataDir: string;
  /** The URL of `database` on this server. */
  url(database: string): string;
  /** A connected client on `database` (the caller ends it). */
  connect(database?: string): Promise<pg.Client>;
}

/** A standby of the pair, with what a test does to it. */
export interface Standby extends PairServer {
  /** `pg_wal_replay_pause()`: it keeps receiving WAL but applies none. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** `recovery_min_apply_delay` (0 turns it off), reloaded at once. */
  setApplyDelay(ms: number): Promise<void>;
  /** Resolves once it has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** `pg_ctl stop -m immediate`: a crash, connections dropped. */
  kill(): Promise<void>;
  /** Starts it again (after `kill`), on the same port. */
  start(): Promise<void>;
}

/** A running primary with its standbys. */
export interface StandbyPair {
  primary: PairServer;
  standbys: Standby[];
  /** Creates an empty database on the primary, replicated to every standby; returns its name. */
  createDatabase(prefix: string): Promise<string>;
  /** Stops every server and removes the directory. */
  stop(): Promise<void>;
}

const SERVER_SETTINGS = `
listen_addresses = '127.0.0.1'
wal_level = replica
max_wal_senders = 10
wal_keep_size = 512MB
hot_standby = on
hot_standby_feedback = on
max_connections = 100
shared_buffers = 32MB
fsync = off
synchronous_commit = on
full_page_writes = off
log_min_messages = warning
`;

/**
 * Starts a primary and `standbyCount` streaming standbys (default 1). Takes 2–4 s.
 * @example const pair = await startStandbyPair(2); after(() => pair.stop());
 */
export async function startStandbyPair(standbyCount = 1): Promise<StandbyPair> {
  for (const program of ["initdb", "pg_ctl", "pg_basebackup"]) {
    if (!existsSync(join(POSTGRES_BIN, program)))
      throw new Error(`${POSTGRES_BIN}/${program} is missing: the replica tests need Debian's postgresql-15`);
  }
  const root = mkdtempSync(join(tmpdir(), "mdq-standby-"));
  chmodSync(root, 0o755);
  const account = serverAccount();
  if (account) chownSync(root, account.uid, account.gid);
  const servers: PairServer[] = [];
  const stopAll = () => {
    for (const server of servers) {
      try {
        // As the server's account: pg_ctl refuses to run as root, and a server left running after
        // its folder is gone holds its port and memory until it notices.
        runSync(
          join(POSTGRES_BIN, "pg_ctl"),
          ["-D", server.dataDir, "stop", "-m", "immediate", "-s"],
          account,
        );
      } catch {
        // Not running.
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  const onExit = () => stopAll();
  process.once("exit", onExit);
  try {
    const primary = server(root, "primary", await freePort());
    servers.push(primary);
    await runAsPostgres(join(POSTGRES_BIN, "initdb"), [
      "-D",
      primary.dataDir,
      "-U",
      STANDBY_PAIR_USER,
      "--auth=trust",
      "--no-sync",
      "--encoding=UTF8",
      "--locale=C.UTF-8",
    ]);
    await appendFile(
      join(primary.dataDir, "pg_hba.conf"),
      "host replication all 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 trust\n",
    );
    await appendFile(join(primary.dataDir, "postgresql.conf"), settingsOf(root, primary.port));
    await pgCtl(primary, "start");
    const standbys: Standby[] = [];
    for (let index = 0; index < standbyCount; index += 1) {
      const standby = server(root, `standby${index + 1}`, await freePort());
      servers.push(standby);
      await runAsPostgres(join(POSTGRES_BIN, "pg_basebackup"), [
        "-h",
        "127.0.0.1",
        "-p",
        String(primary.port),
        "-U",
        STANDBY_PAIR_USER,
        "-D",
        standby.dataDir,
        "-R",
        "-X",
        "stream",
        "--no-sync",
      ]);
      await appendFile(join(standby.dataDir, "postgresql.conf"), `port = ${standby.port}\n`);
      await pgCtl(standby, "start");
      standbys.push(standbyOf(standby, primary));
    }
    for (const standby of standbys) await standby.caughtUp();
    return {
      primary,
      standbys,
      async createDatabase(prefix) {
        const name = `mdq_${prefix}_${Math.random().toString(16).slice(2, 10)}`;
        const client = await primary.connect();
        try {
          await client.query(`CREATE DATABASE ${name}`);
        } finally {
          await client.end();
        }
        for (const standby of standbys) await standby.caughtUp();
        return name;
      },
      async stop() {
        process.removeListener("exit", onExit);
        stopAll();
      },
    };
  } catch (error) {
    process.removeListener("exit", onExit);
    stopAll();
    throw error;
  }
}

function settingsOf(root: string, port: number): string {
  return `${SERVER_SETTINGS}port = ${port}\nunix_socket_directories = '${root}'\n`;
}

function server(root: string, name: string, port: number): PairServer {
  const url = (database: string) => `postgres://${STANDBY_PAIR_USER}@127.0.0.1:${port}/${database}`;
  return {
    port,
    dataDir: join(root, name),
    url,
    async connect(database = "postgres") {
      const client = new pg.Client({ connectionString: url(database), connectionTimeoutMillis: 5_000 });
      client.on("error", () => undefined);
      await client.connect();
      return client;
    },
  };
}

async function pgCtl(target: PairServer, action: "start" | "stop"): Promise<void> {
  const log = join(target.dataDir, "..", `${target.dataDir.split("/").at(-1)}.log`);
  if (action === "start") {
    await runAsPostgres(join(POSTGRES_BIN, "pg_ctl"), ["-D", target.dataDir, "-l", log, "-w", "-s", "start"]);
  } else {
    await runAsPostgres(join(POSTGRES_BIN, "pg_ctl"), [
      "-D",
      target.dataDir,
      "-m",
      "immediate",
      "-s",
      "stop",
    ]);
  }
}

async function onServer<T>(target: PairServer, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await target.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function standbyOf(standby: PairServer, primary: PairServer): Standby {
  return {
    ...standby,
    pauseReplay: () =>
      onServer(standby, (client) => client.query("SELECT pg_wal_replay_pause()")).then(() => {}),
    resumeReplay: () =>
      onServer(standby, (client) => client.query("SELECT pg_wal_replay_resume()")).then(() => {}),
    async setApplyDelay(ms) {
      await onServer(standby, async (client) => {
        await client.query(`ALTER SYSTEM SET recovery_min_apply_delay = '${Math.max(0, Math.round(ms))}ms'`);
        await client.query("SELECT pg_reload_conf()");
      });
    },
    async caughtUp(timeoutMs = 15_000) {
      const target = await onServer(primary, async (client) => {
        const { rows } = await client.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
        return rows[0]!.lsn;
      });
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const replayed = await onServer(standby, async (client) => {
          const { rows } = await client.query<{ done: boolean }>(
            "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) AS done",
            [target],
          );
          return rows[0]!.done;
        }).catch(() => false);
        if (replayed) return;
        if (Date.now() > deadline)
          throw new Error(`standby on port ${standby.port} did not catch up to ${target}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    kill: () => pgCtl(standby, "stop"),
    start: () => pgCtl(standby, "start"),
  };
}
