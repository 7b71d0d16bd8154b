/**
 * The row checks of a records file: every rule of `record-rules.ts` over every staged row, and
 * the duplicate keys. Rows with problems are the only ones ever turned into messages.
 */
import { listValue } from "@duckdb/node-api";
import type { FxRateStarts } from "../store/model/store.js";
import type { Scratch } from "./file-staging.js";
import { MAX_REPORTED_PROBLEMS, quoteValue, RecordsFileError } from "./load-errors.js";
import { findUnratedRows, unratedMessage } from "./rate-rule.js";
import {
  COLUMN_RULES,
  floatPrecisionRule,
  NATURAL_KEY,
  RECORD_COLUMNS,
  type RecordColumn,
  type ValueRule,
} from "./record-rules.js";
import type { Staged } from "./record-stagers.js";

/** A problem before it has a line number: rows are identified by their 0-based index. */
interface RowProblem {
  rowIndex: number;
  column?: RecordColumn;
  message: string | ((line: (rowIndex: number) => number) => string);
  /** Other rows the message names (the first occurrence of a duplicate). */
  related?: number;
}

/**
 * Runs every rule over every row; throws a `RecordsFileError` with the first problems. With
 * `rateStarts`, a row's currency must also have a rate on or before its day (rate-rule.ts).
 */
export async function checkRows(
  scratch: Scratch,
  path: string,
  staged: Staged,
  rowCount: number,
  rateStarts?: FxRateStarts,
): Promise<void> {
  const columns = RECORD_COLUMNS.filter((column) => staged.columns.has(column));
  const rules = new Map(
    columns.map((column) => {
      const floatSource = staged.floatSources[column];
      return [
        column,
        floatSource ? [...COLUMN_RULES[column], floatPrecisionRule(floatSource)] : COLUMN_RULES[column],
      ];
    }),
  );
  const badValues = new Map<RecordColumn, string[]>();
  for (const column of columns) {
    const valueRules = rules.get(column)!.filter((rule): rule is ValueRule => rule.kind === "value");
    if (valueRules.length === 0) continue;
    const reader = await scratch.connection.runAndReadAll(
      `SELECT DISTINCT ${column} AS value FROM staged WHERE ${column} <> ''`,
    );
    const bad = reader
      .getColumnsJS()[0]!
      .map(String)
      .filter((value) => valueRules.some((rule) => !rule.valid(value)));
    if (bad.length > 0) badValues.set(column, bad);
  }

  const params: ReturnType<typeof listValue>[] = [];
  const codes = columns.map((column) => {
    const x = column;
    const branches = [`WHEN ${x} IS NULL OR ${x} = '' THEN 1`];
    rules.get(column)!.forEach((rule, index) => {
      if (rule.kind === "sql") branches.push(`WHEN ${rule.bad(x)} THEN ${index + 2}`);
      else if (badValues.has(column)) {
        params.push(listValue(badValues.get(column)!));
        branches.push(`WHEN list_contains($${params.length}, ${x}) THEN ${index + 2}`);
      }
    });
    const guard = staged.rowRule ? `WHEN ${staged.rowRule.bad} THEN 0 ` : "";
    return `CASE ${guard}${branches.join(" ")} ELSE 0 END AS e_${column}`;
  });
  if (staged.rowRule) codes.unshift(`CASE WHEN ${staged.rowRule.bad} THEN 1 ELSE 0 END AS e_row`);
  const codeColumns = [...(staged.rowRule ? ["e_row"] : []), ...columns.map((column) => `e_${column}`)];
  const anyBad = codeColumns.map((code) => `${code} <> 0`).join(" OR ");
  const coded = `SELECT row_index, ${codes.join(", ")}, ${columns.join(", ")} FROM staged`;
  const totals = await scratch.connection.runAndReadAll(
    `SELECT ${codeColumns.map((code) => `count_if(${code} <> 0)`).join(" + ")} AS n FROM (${coded})`,
    params,
  );
  const ruleErrorCount = Number(totals.getRowObjectsJS()[0]?.["n"] ?? 0);
  const problems: RowProblem[] = [];
  if (ruleErrorCount > 0) {
    const reader = await scratch.connection.runAndReadAll(
      `SELECT * FROM (${coded}) WHERE ${anyBad} ORDER BY row_index LIMIT ${MAX_REPORTED_PROBLEMS}`,
      params,
    );
    for (const row of reader.getRowObjectsJS()) {
      const rowIndex = Number(row["row_index"]);
      if (staged.rowRule && Number(row["e_row"]) !== 0) {
        problems.push({ rowIndex, message: staged.rowRule.message });
        continue;
      }
      for (const column of columns) {
        const code = Number(row[`e_${column}`]);
        if (code === 0) continue;
        const value = String(row[column] ?? "");
        const message = code === 1 ? "missing value" : rules.get(column)![code - 2]!.message(value);
        problems.push({ rowIndex, column, message });
      }
    }
  }

  // Checks of a row against others (duplicate keys) or against the store (FX rates).
  const acrossRows: { count: number; problems: RowProblem[] }[] = [];
  if (staged.columns.has("record_id")) {
    acrossRows.push(await findDuplicates(scratch, ["record_id"], "record_id"));
  }
  acrossRows.push(await findDuplicates(scratch, NATURAL_KEY, undefined));
  if (rateStarts && staged.columns.has("currency") && staged.columns.has("date")) {
    acrossRows.push(await findUnrated(scratch, rateStarts));
  }
  const acrossRowsCount = acrossRows.reduce((sum, found) => sum + found.count, 0);
  if (ruleErrorCount + acrossRowsCount === 0) return;

  for (const found of acrossRows) problems.push(...found.problems);
  const order = (problem: RowProblem) =>
    problem.column === undefined ? RECORD_COLUMNS.length : RECORD_COLUMNS.indexOf(problem.column);
  problems.sort((a, b) => a.rowIndex - b.rowIndex || order(a) - order(b));
  const reported = problems.slice(0, MAX_REPORTED_PROBLEMS);
  const indexes = [
    ...new Set(reported.flatMap((problem) => [problem.rowIndex, problem.related ?? problem.rowIndex])),
  ];
  const found = await staged.lines(indexes);
  const lines = new Map(indexes.map((rowIndex, position) => [rowIndex, found[position]!]));
  const lineOf = (rowIndex: number) => lines.get(rowIndex)!;
  throw new RecordsFileError(
    path,
    reported.map((problem) => ({
      line: lineOf(problem.rowIndex),
      ...(problem.column === undefined ? {} : { column: problem.column }),
      message: typeof problem.message === "string" ? problem.message : problem.message(lineOf),
    })),
    { rowCount, errorCount: ruleErrorCount + acrossRowsCount, position: staged.position },
  );
}

/** Rows whose currency has no rate on or before their day (rate-rule.ts). */
async function findUnrated(
  scratch: Scratch,
  rateStarts: FxRateStarts,
): Promise<{ count: number; problems: RowProblem[] }> {
  const { count, rows } = await findUnratedRows(scratch.connection, rateStarts);
  return {
    count,
    problems: rows.map(({ rowIndex, currency, date }) => ({
      rowIndex,
      column: "currency",
      message: unratedMessage(currency, date, rateStarts.get(currency)),
    })),
  };
}

/**
 * Rows whose key repeats an earlier row's. Counting groups is cheap; rows are only listed when
 * some key does repeat.
 */
async function findDuplicates(
  scratch: Scratch,
  key: RecordColumn[],
  column: RecordColumn | undefined,
): Promise<{ count: number; problems: RowProblem[] }> {
  const present = key.map((part) => `${part} IS NOT NULL AND ${part} <> ''`).join(" AND ");
  const groups = `SELECT ${key.join(", ")}, count(*) AS n FROM staged WHERE ${present}
    GROUP BY ALL HAVING count(*) > 1`;
  await scratch.connection.run(`CREATE OR REPLACE TEMP TABLE repeated AS ${groups}`);
  const sum = await scratch.connection.runAndReadAll("SELECT sum(n - 1) AS n FROM repeated");
  const count = Number(sum.getRowObjectsJS()[0]?.["n"] ?? 0);
  if (count === 0) return { count: 0, problems: [] };
  const reader = await scratch.connection.runAndReadAll(
    `SELECT * FROM (
       SELECT row_index, min(row_index) OVER (PARTITION BY ${key.map((part) => `s.${part}`).join(", ")}) AS first,
         ${key.map((part) => `s.${part}`).join(", ")}
       FROM staged s SEMI JOIN repeated r ON ${key.map((part) => `s.${part} = r.${part}`).join(" AND ")})
     WHERE row_index <> first ORDER BY row_index LIMIT ${MAX_REPORTED_PROBLEMS}`,
  );
  const problems = reader.getRowObjectsJS().map((row): RowProblem => {
    const first = Number(row["first"]);
    const values = key.map((part) => String(row[part]));
    const what =
      column === undefined
        ? `(${key.join(", ")}) = (${values.map(quoteValue).join(", ")})`
        : `${column} ${quoteValue(values[0]!)}`;
    return {
      rowIndex: Number(row["row_index"]),
      ...(column === undefined ? {} : { column }),
      related: first,
      message: (line) => `duplicate ${what}, first on line ${line(first)}`,
    };
  });
  return { count, problems };
}
