/**
 * Watches each standby's replay position (`pg_last_wal_replay_lsn()`) every `intervalMs`, as
 * brandur's "Postgres reads" observer does, so that choosing a standby for a read costs no round
 * trip to it: the position seen is a floor of what the standby holds from then on. A standby
 * that fails a poll, or has not answered one for `staleAfterMs`, is not usable until a poll
 * answers again; so one that is down, stopped or unreachable is skipped within that bound.
 */
import pg from "pg";
import { type Lsn, parseLsn } from "./commit-lsns.js";

/** What the observer last saw of one standby. */
export interface StandbyState {
  /** Its position in the list of `MDQ_DATABASE_REPLICA_URLS` (its metric label). */
  readonly index: number;
  /** The WAL it had replayed at the last poll that answered; 0 before any. */
  replayLsn: Lsn;
  /** Whether the last poll answered, and the read path has not seen it fail since. */
  up: boolean;
  /** When (`Date.now()`) a poll last answered. */
  seenAt: number;
  /** Bytes of the primary's WAL it had not replayed at the last poll. */
  lagBytes: number;
  /** Seconds since the primary's last transaction it replayed, 0 when it replayed all it received. */
  lagSeconds: number;
}

/** How the observer connects and how often it looks. */
export interface ObserverOptions {
  primaryUrl: string;
  replicaUrls: readonly string[];
  /** Milliseconds between polls (default 200). */
  intervalMs?: number;
  /** A standby whose last answer is older than this is skipped (default 2 000). */
  staleAfterMs?: number;
}

const POLL_SQL = `SELECT pg_last_wal_replay_lsn()::text AS replay_lsn,
  CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END AS lag_seconds`;

/** Polls the standbys; `usable` is what the read router chooses from. */
export class ReplicaObserver {
  readonly standbys: StandbyState[];
  private readonly pools: pg.Pool[];
  private readonly primary: pg.Pool;
  private readonly staleAfterMs: number;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(options: ObserverOptions) {
    const intervalMs = options.intervalMs ?? 200;
    this.staleAfterMs = options.staleAfterMs ?? 2_000;
    this.primary = observerPool(options.primaryUrl, this.staleAfterMs);
    this.pools = options.replicaUrls.map((url) => observerPool(url, this.staleAfterMs));
    this.standbys = options.replicaUrls.map((_, index) => ({
      index,
      replayLsn: 0n,
      up: false,
      seenAt: 0,
      lagBytes: 0,
      lagSeconds: 0,
    }));
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
  }

  /** Polls once now (the first poll, and tests); resolves when every standby answered or failed. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const [primaryLsn] = await Promise.all([
        this.primary
          .query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn")
          .then(({ rows }) => parseLsn(rows[0]!.lsn))
          .catch(() => undefined),
        ...this.pools.map((pool, index) => this.pollOne(pool, this.standbys[index]!)),
      ]);
      if (primaryLsn !== undefined)
        for (const state of this.standbys) state.lagBytes = Math.max(0, Number(primaryLsn - state.replayLsn));
    } finally {
      this.polling = false;
    }
  }

  private async pollOne(pool: pg.Pool, state: StandbyState): Promise<void> {
    try {
      const { rows } = await pool.query<{ replay_lsn: string | null; lag_seconds: string | number }>(
        POLL_SQL,
      );
      const row = rows[0]!;
      // null: not a standby (or one that has replayed nothing yet): never used for reads.
      if (row.replay_lsn === null) throw new Error("not a standby");
      // Taken as it is, never kept at its maximum: a standby that restarted replays again from
      // its last restartpoint, and shows only what it replayed since.
      state.replayLsn = parseLsn(row.replay_lsn);
      state.up = true;
      state.seenAt = Date.now();
      state.lagSeconds = Number(row.lag_seconds);
    } catch {
      state.up = false;
    }
  }

  /** The standbys answering, whose last answer is fresh, that have replayed at least `lsn`. */
  usable(lsn: Lsn): StandbyState[] {
    const freshSince = Date.now() - this.staleAfterMs;
    return this.standbys.filter((state) => state.up && state.seenAt >= freshSince && state.replayLsn >= lsn);
  }

  /** Told by the read path that a standby failed a read: skipped until a poll answers again. */
  failed(index: number): void {
    const state = this.standbys[index];
    if (state) state.up = false;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all([this.primary, ...this.pools].map((pool) => pool.end().catch(() => undefined)));
  }
}

/** One connection, every wait bounded by `timeoutMs`: a standby that hangs is stale, never waited for. */
function observerPool(url: string, timeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    idleTimeoutMillis: 0,
    keepAlive: true,
    application_name: "mdq replica observer",
  });
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}
