/**
 * Where in the primary's WAL each brand's latest data version ends (docs/storage.md, "Reads on
 * standbys"): the write-ahead-log position a standby must have replayed before it may answer for
 * the brand. A writer records it right after its commit (`recordCommitLsns`); a reader asks the
 * primary for it at the start of a request (`requiredLsn`), in one primary-key read, and gets a
 * position that is never too early, whether or not the writer recorded it yet.
 */
import type pg from "pg";

/** A WAL position as a number: `X/Y` is X × 2³² + Y. */
export type Lsn = bigint;

/** `X/Y` (PostgreSQL's `pg_lsn` text) as a number. */
export function parseLsn(text: string): Lsn {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a WAL position: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/** Migration 7: one row per brand, its latest recorded version and the WAL position after it. */
export const BRAND_COMMIT_LSNS = `
CREATE TABLE brand_commit_lsns (
  brand_id text COLLATE "C" PRIMARY KEY,
  version bigint NOT NULL,
  lsn pg_lsn NOT NULL,
  publishing_until timestamptz
);
`;

/**
 * Records, for the brands given (all when null), their committed version and the WAL insert
 * position read after this statement's snapshot: every version the snapshot sees was committed,
 * so its commit record was inserted before, and a standby that replayed up to the position has
 * it. Reads `brand_versions` without locking it: a load still running on a brand holds its row,
 * and records its own version when it commits.
 */
const RECORD_SQL = `
INSERT INTO brand_commit_lsns (brand_id, version, lsn)
  SELECT brand_id, version, pg_current_wal_insert_lsn() FROM brand_versions
  WHERE $1::text[] IS NULL OR brand_id = ANY($1::text[])
ON CONFLICT (brand_id) DO UPDATE SET version = excluded.version, lsn = excluded.lsn
  WHERE brand_commit_lsns.version <= excluded.version`;

/** Records the WAL position after the committed versions of `brands` (null: every brand). */
export async function recordCommitLsns(pool: pg.Pool, brands: string[] | null): Promise<void> {
  await pool.query(RECORD_SQL, [brands]);
}

/**
 * Marks a brand as being published for the next minute: until the publish records its position,
 * readers take the primary's current one (a publish writes no data version, so the version
 * alone cannot say a standby has it). Committed before the publish, so a reader that sees the
 * publish sees the mark or the position recorded after it.
 */
export async function markPublishing(pool: pg.Pool, brandId: string): Promise<void> {
  await pool.query(
    `INSERT INTO brand_commit_lsns (brand_id, version, lsn, publishing_until)
       VALUES ($1, 0, '0/0', now() + interval '1 minute')
     ON CONFLICT (brand_id) DO UPDATE SET publishing_until = excluded.publishing_until`,
    [brandId],
  );
}

/** Records a brand's position after its publish committed, and clears its mark. */
export async function recordPublished(pool: pg.Pool, brandId: string): Promise<void> {
  await pool.query(
    `UPDATE brand_commit_lsns SET lsn = pg_current_wal_insert_lsn(), publishing_until = NULL,
       version = coalesce((SELECT version FROM brand_versions WHERE brand_id = $1), 0)
     WHERE brand_id = $1`,
    [brandId],
  );
}

/**
 * The position a standby must have replayed to answer for the brand as the primary knows it now:
 * the recorded one when it belongs to the brand's latest version and no publish is under way;
 * otherwise the primary's WAL insert position, read after the statement's snapshot (later than
 * every commit it sees: never too early, only sometimes later than needed). A brand with no
 * version has nothing to wait for.
 */
const REQUIRED_SQL = `
SELECT v.version IS NULL AS unversioned,
  (c.version >= coalesce(v.version, 0) AND (c.publishing_until IS NULL OR c.publishing_until < now())) AS recorded,
  c.lsn::text AS lsn, pg_current_wal_insert_lsn()::text AS insert_lsn,
  (SELECT generation FROM data_generation WHERE id = 1)::text AS generation
FROM (SELECT $1::text AS brand_id) AS b
LEFT JOIN brand_versions AS v ON v.brand_id = b.brand_id
LEFT JOIN brand_commit_lsns AS c ON c.brand_id = b.brand_id`;

/** What a standby must have replayed to answer for a brand, and the data generation it was read at. */
export interface RequiredPosition {
  lsn: Lsn;
  /** The region's data generation in the same snapshot (every load and FX change bumps it). */
  generation: bigint;
}

/** The WAL position a standby must have replayed to answer for `brandId` (one read on the primary). */
export async function requiredLsn(pool: pg.Pool, brandId: string): Promise<RequiredPosition> {
  const { rows } = await pool.query<{
    unversioned: boolean;
    recorded: boolean | null;
    lsn: string | null;
    insert_lsn: string;
    generation: string | null;
  }>(REQUIRED_SQL, [brandId]);
  const row = rows[0]!;
  const generation = BigInt(row.generation ?? 0);
  if (row.recorded === true && row.lsn !== null) return { lsn: parseLsn(row.lsn), generation };
  // A publish of a brand without a version is marked too: wait for the current position then.
  if (row.unversioned && row.lsn === null) return { lsn: 0n, generation };
  return { lsn: parseLsn(row.insert_lsn), generation };
}
