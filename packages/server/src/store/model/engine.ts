/**
 * What an engine implements for the shared SQL code: its dialect (`SqlDialect`), how it runs a
 * planned statement inside one read snapshot (`SnapshotReader`, `ResultTable`) or on a write's
 * connection (`SqlRun`). Nothing here imports the rest of store/.
 */

type Row = Record<string, unknown>;

/** A value bound to a statement's placeholder (sql/statement.ts `Statement.bind`). */
export type SqlValue = string | number | bigint | null;

/** Runs one statement on the caller's connection (inside its transaction or snapshot). */
export type SqlRun = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** A statement's result, read by position: each engine keeps its driver's cheapest layout. */
export interface ResultTable {
  readonly rowCount: number;
  /** The value at a 0-based row and column, as the driver returns it. */
  value(row: number, column: number): unknown;
}

/** One engine's reads inside one snapshot (a transaction on one connection). */
export interface SnapshotReader {
  readonly dialect: SqlDialect;
  /** Runs a planned statement. */
  run(statement: PlannedSql): Promise<ResultTable>;
  /**
   * Runs a packed page's statement (query-planner.ts `PlannedPackedPage`: one row, its row count
   * and its text), the text as UTF-8 bytes where the engine can hand them over undecoded.
   */
  runPacked(statement: PlannedSql): Promise<ResultTable>;
  /**
   * The data generation this snapshot reads, or null when that is not known for sure (a write
   * raced its start): then nothing is reused from, or remembered for, other pages.
   */
  generation(): Promise<string | null>;
}

/** Runs `read` with a reader of one snapshot of an engine's data. */
export type InSnapshot = <Result>(read: (reader: SnapshotReader) => Promise<Result>) => Promise<Result>;

/** SQL text with its positional parameters (`?` or `$n`, per dialect). */
export interface PlannedSql {
  sql: string;
  params: SqlValue[];
}

/** A planned page query: the SQL and, per leading result column, the GraphQL field it fills. */
export interface PlannedPage extends PlannedSql {
  fields: string[];
}

/** One engine's spelling of the constructs the planner needs. */
export interface SqlDialect {
  readonly engine: "duckdb" | "postgres";
  /** The placeholder of the `position`-th (1-based) parameter. */
  placeholder(position: number): string;
  /** `YYYY-MM-DD` text of a DATE expression. */
  formatDate(expression: string): string;
  /** The Monday of the ISO week holding a DATE expression, as a DATE. */
  weekStart(expression: string): string;
  /** The first day of the month holding a DATE expression, as a DATE. */
  monthStart(expression: string): string;
  /** An integer type wide enough for amount × rate × 10⁴ (HUGEINT, or numeric). */
  readonly wideInteger: string;
  /** The 64-bit floating point type. */
  readonly double: string;
  /** A timestamp expression as the engine's row mapping reads instants. */
  instant(expression: string): string;
  /**
   * A text expression as the driver can hand it over cheapest, for packed-page.ts to read as
   * UTF-8: DuckDB's BLOB (bytes, no decoding), PostgreSQL's text as it is.
   */
  utf8(expression: string): string;
  /**
   * `string_agg(value, separator)` over the rows of one subquery that returns them ordered by
   * `orderBy` (its own ORDER BY and LIMIT), in that order.
   */
  aggregateInOrder(value: string, separator: string, orderBy: string): string;
  /**
   * The LIMIT of `rows` (a literal count) over rows that hold little more than them, the days a
   * walk's page spans (query-planner.ts `planPackedRecordsPage`): sorted whole, then cut.
   */
  spanLimit(rows: string): string;
  /** Whether `column` equals one of `placeholders` (at least one), as the engine plans it best. */
  oneOf(column: string, placeholders: readonly string[]): string;
  /**
   * The body of the `day_rates` CTE: (currency, day, rate_e6) for every day in [from, to] and
   * every one of `currencies`, carrying the latest rate on or before the day (NULL when none),
   * plus the base currency at 1 (rate 1 000 000) on every day. `bind` adds a parameter and
   * returns its placeholder; parameters must be bound in the order they appear in the text.
   * `currencies` (never the base) come from the closed list of codes, so they are written as
   * literals.
   */
  dayRates(
    bind: (value: string) => string,
    range: { from: string; to: string },
    base: string,
    currencies: readonly string[],
  ): string;
  /**
   * The FX rates the days of [from, to] can use, as a subquery of (currency, date, rate_e6): each
   * of `currencies`' latest rate on or before `from`, and its rates after it up to `to`. Read or
   * joined instead of the whole of `fx_rates`, so that a read does not grow dearer with the FX
   * history. `bind` and `currencies` as in `dayRates`.
   */
  fxRates(
    bind: (value: string) => string,
    range: { from: string; to: string },
    currencies: readonly string[],
  ): string;
}
