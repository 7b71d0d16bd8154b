/**
 * One statement being planned: its parameters, bound in the order their placeholders appear
 * (`Statement.bind`, the one way a value enters a statement), and the row counts written into it.
 */
import type { PlannedSql, SqlDialect, SqlValue } from "../model/engine.js";

/** The parameters of one statement being planned, and the dialect it is written in. */
export class Statement {
  readonly params: PlannedSql["params"] = [];

  constructor(readonly dialect: SqlDialect) {}

  /** Adds a parameter and returns its placeholder; call in the order placeholders appear. */
  bind = (value: SqlValue): string => {
    this.params.push(value);
    return this.dialect.placeholder(this.params.length);
  };
}

/**
 * A LIMIT's or OFFSET's row count written into the statement, never bound: DuckDB turns ORDER BY +
 * LIMIT into a Top-N only when both are constants (`TopN::CanOptimize`). DuckDB 1.5 binds a
 * prepared statement's parameters as constants, so a bound count gets a Top-N too (`EXPLAIN
 * EXECUTE`, 2026-11-29); a limit that is not a constant, `(SELECT n)`, gets a whole sort
 * (`SqlDialect.spanLimit`). A count is a whole number the request's validation bounded.
 */
export function rowCount(rows: number): string {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new Error(`not a row count: ${rows}`);
  return String(rows);
}

/**
 * The text `write` makes and the values it bound, in the order their placeholders appear, as the
 * arguments of an `SqlRun` (a write's statement on its transaction's connection).
 */
export function bound(
  dialect: SqlDialect,
  write: (bind: Statement["bind"]) => string,
): [sql: string, params: PlannedSql["params"]] {
  const statement = new Statement(dialect);
  return [write(statement.bind), statement.params];
}
