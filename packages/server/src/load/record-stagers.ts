/**
 * The format stagers of a records file: each reads CSV, NDJSON or Parquet into the scratch
 * database as one relation `staged` (row_index, canonical VARCHAR columns), resolving the file's
 * column names through the mapping, and says how rows map back to line numbers.
 */

import type { LoadFormat } from "@mdq/contract";
import {
  csvFieldColumn,
  csvLinesOfRecords,
  describeColumns,
  quoteIdentifier,
  readCsvHeader,
  readCsvRows,
  readTextLines,
  type Scratch,
  sqlString,
} from "./file-staging.js";
import { type LoadPosition, type LoadProblem, RecordsFileError } from "./load-errors.js";
import { AMOUNT_COLUMNS, COUNT_COLUMNS, RECORD_COLUMNS, type RecordColumn } from "./record-rules.js";

/** How a column of a Parquet file is typed, when its type holds its values exactly (`typedColumns`). */
export type TypedColumnType = "integer" | "decimal" | "date";

/** File formats `mdq load` reads. */
export type RecordsFileFormat = LoadFormat;

/** What a format's stager leaves behind: a relation `staged` (row_index, canonical VARCHAR columns). */
export interface Staged {
  columns: Set<RecordColumn>;
  position: LoadPosition;
  /** The line (or row) number of each 0-based row index. */
  lines(rowIndexes: number[]): Promise<number[]>;
  /** A whole-row problem (NDJSON: the line is not a JSON object), checked before columns. */
  rowRule?: { bad: string; message: string };
  /** Per amount column, an SQL boolean telling whether the value came from a binary float. */
  floatSources: Partial<Record<RecordColumn, string>>;
}

/** Stages one file format. */
export type Stager = (
  scratch: Scratch,
  path: string,
  mapping: Partial<Record<string, string>>,
) => Promise<Staged>;

/** The stager of each format. */
export const STAGERS: Record<RecordsFileFormat, Stager> = {
  async csv(scratch, path, mapping) {
    const { header, columns } = await csvColumns(path, mapping);
    const structural = await readCsvRows(scratch.connection, path, "file_rows", header.length);
    if (structural.length > 0) {
      const rowCount = await countTable(scratch, "file_rows");
      throw new RecordsFileError(path, structural, { rowCount: rowCount + structural.length });
    }
    const select = [...columns].map(([column, field]) => `${field} AS ${column}`);
    await scratch.connection.run(
      `CREATE VIEW staged AS SELECT rowid AS row_index, ${select.join(", ")} FROM file_rows`,
    );
    return {
      columns: new Set(columns.keys()),
      position: "line",
      async lines(rowIndexes) {
        const found = await csvLinesOfRecords(path, rowIndexes);
        return rowIndexes.map((index, position) => found[position] ?? index + 2);
      },
      floatSources: {},
    };
  },

  async ndjson(scratch, path, mapping) {
    const structural = await readTextLines(scratch.connection, path, "file_lines");
    if (structural.length > 0) throw new RecordsFileError(path, structural);
    const { keys, structure, select, floatSources } = ndjsonColumns(mapping, (key) => `v[${sqlString(key)}]`);
    await scratch.connection.run(
      `CREATE TABLE staged AS SELECT row_index, v IS NULL AS not_object, ${select.join(", ")}
        FROM (SELECT rowid AS row_index,
                CASE WHEN starts_with(ltrim(line), '{') THEN TRY(from_json(line, $1)) END AS v
              FROM file_lines WHERE line IS NOT NULL AND trim(line) <> '')`,
      [JSON.stringify(structure)],
    );
    await scratch.connection.run("DROP TABLE file_lines");
    const { present, objectCount } = await presentColumns(scratch, [...keys.keys()]);
    const missing = RECORD_COLUMNS.filter((column) => column !== "record_id" && !present.has(column));
    if (missing.length > 0 && objectCount > 0) {
      throw new RecordsFileError(
        path,
        missing.map((column) => ({
          line: 0,
          column,
          message: `no record has a value for ${describeKey(column, keys.get(column)!)}`,
        })),
      );
    }
    return {
      // When no line is an object, each line gets its own "not a JSON object" problem.
      columns: objectCount > 0 ? present : new Set(RECORD_COLUMNS.filter((c) => c !== "record_id")),
      position: "line",
      lines: async (rowIndexes) => rowIndexes.map((index) => index + 1),
      rowRule: { bad: "not_object", message: "the line is not a JSON object" },
      floatSources,
    };
  },

  async parquet(scratch, path, mapping) {
    const { columns, select, floatSources } = await parquetColumns(scratch.connection, path, mapping);
    await scratch.connection.run(
      `CREATE TABLE staged AS SELECT file_row_number AS row_index, ${select.join(", ")}
        FROM read_parquet($1, file_row_number = true)`,
      [path],
    );
    return {
      columns: new Set(columns.keys()),
      position: "row",
      lines: async (rowIndexes) => rowIndexes.map((index) => index + 1),
      floatSources,
    };
  },
};

/** A CSV file's header checked and its fields matched to the canonical columns (`c0`, `c1`, …). */
export async function csvColumns(
  path: string,
  mapping: Partial<Record<string, string>>,
): Promise<{ header: string[]; columns: Map<RecordColumn, string> }> {
  const header = await readCsvHeader(path);
  if (!Array.isArray(header)) throw new RecordsFileError(path, [header]);
  if (header.length === 1 && /[;\t|]/.test(header[0]!)) {
    throw new RecordsFileError(path, [
      { line: 1, message: "the header has a single column: fields must be separated by commas" },
    ]);
  }
  const resolved = resolveColumns(
    header.map((name, index) => ({ name, column: csvFieldColumn(index) })),
    mapping,
  );
  if (resolved.problems.length > 0) {
    throw new RecordsFileError(
      path,
      resolved.problems.map((problem) => ({ ...problem, line: 1 })),
    );
  }
  return { header, columns: resolved.columns };
}

/**
 * The NDJSON keys of the canonical columns (through the mapping), the type each is read as, and
 * the canonical VARCHAR columns over `field(key)`. Amounts are read as raw JSON so that a JSON
 * number (a binary float) can be told from a JSON string.
 */
export function ndjsonColumns(
  mapping: Partial<Record<string, string>>,
  field: (key: string) => string,
): {
  keys: Map<RecordColumn, string>;
  structure: Record<string, string>;
  select: string[];
  floatSources: Partial<Record<RecordColumn, string>>;
} {
  const keys = new Map<RecordColumn, string>(
    RECORD_COLUMNS.map((column) => [column, mapping[column] ?? column]),
  );
  const structure: Record<string, string> = {};
  for (const [column, key] of keys) {
    structure[key] = AMOUNT_COLUMNS.has(column) && structure[key] !== "VARCHAR" ? "JSON" : "VARCHAR";
  }
  const select: string[] = [];
  const floatSources: Partial<Record<RecordColumn, string>> = {};
  for (const [column, key] of keys) {
    const value = field(key);
    if (structure[key] === "JSON") {
      select.push(
        `CASE WHEN ${value} IS NULL OR ${value} = 'null' THEN NULL
          WHEN starts_with(${value}, '"') THEN ${value} ->> '$' ELSE CAST(${value} AS VARCHAR) END AS ${column}`,
        `${value} IS NOT NULL AND NOT starts_with(${value}, '"') AS ${column}__float`,
      );
      floatSources[column] = `${column}__float`;
    } else {
      select.push(`${value} AS ${column}`);
    }
  }
  return { keys, structure, select, floatSources };
}

/** A Parquet file's columns matched to the canonical columns, each selected as VARCHAR. */
export async function parquetColumns(
  connection: Scratch["connection"],
  path: string,
  mapping: Partial<Record<string, string>>,
): Promise<{
  columns: Map<RecordColumn, string>;
  select: string[];
  floatSources: Partial<Record<RecordColumn, string>>;
  /** The date, count and amount columns whose Parquet type holds their values exactly (`typedColumns`). */
  typed: Map<RecordColumn, TypedColumnType>;
}> {
  const fileColumns = await describeColumns(connection, "SELECT * FROM read_parquet($1)", [path]);
  const resolved = resolveColumns(
    fileColumns.map(({ name }) => ({ name, column: quoteIdentifier(name) })),
    mapping,
  );
  if (resolved.problems.length > 0) {
    throw new RecordsFileError(path, resolved.problems, { position: "row" });
  }
  const types = new Map(fileColumns.map(({ name, type }) => [quoteIdentifier(name), type]));
  const floatSources: Partial<Record<RecordColumn, string>> = {};
  const select = [...resolved.columns].map(([column, field]) => {
    if (AMOUNT_COLUMNS.has(column) && /^(DOUBLE|FLOAT|REAL)$/.test(types.get(field) ?? "")) {
      floatSources[column] = "true";
    }
    return `CAST(${field} AS VARCHAR) AS ${column}`;
  });
  return {
    columns: resolved.columns,
    select,
    floatSources,
    typed: typedColumns(resolved.columns, types),
  };
}

/** Parquet's integer types, as DuckDB names them. */
const INTEGER_TYPE = /^U?(TINYINT|SMALLINT|INTEGER|BIGINT)$|^HUGEINT$/;
/** A DECIMAL of at most 4 decimals: its values are amounts as the rules take them. */
const AMOUNT_DECIMAL_TYPE = /^DECIMAL\(\d+,\s*[0-4]\)$/;

/**
 * The columns whose Parquet type holds every value the rules accept, exactly: integers for
 * counts, integers and DECIMALs of at most 4 decimals for amounts, DATE for the date. The fast
 * path reads them with their type (record-staging.ts): the counts' and amounts' text, checked
 * digit by digit, cost more than the rest of the read, and a DATE written as text and read back
 * 40 of a 1 M-row file's 235 ms (issue 19). Other types (DOUBLE, text, wider DECIMALs, a
 * TIMESTAMP) are read as text.
 */
function typedColumns(
  columns: Map<RecordColumn, string>,
  types: Map<string, string>,
): Map<RecordColumn, TypedColumnType> {
  const typed = new Map<RecordColumn, TypedColumnType>();
  for (const [column, field] of columns) {
    const type = types.get(field) ?? "";
    if ((COUNT_COLUMNS.has(column) || AMOUNT_COLUMNS.has(column)) && INTEGER_TYPE.test(type))
      typed.set(column, "integer");
    else if (AMOUNT_COLUMNS.has(column) && AMOUNT_DECIMAL_TYPE.test(type)) typed.set(column, "decimal");
    else if (column === "date" && type === "DATE") typed.set(column, "date");
  }
  return typed;
}

function describeKey(column: RecordColumn, key: string): string {
  return key === column ? `"${column}"` : `"${key}" (mapped to ${column})`;
}

/**
 * Matches the file's column names (ignoring case) to the canonical columns, through the mapping.
 * Returns canonical column → SQL expression of the file's column, and a problem per missing column.
 */
function resolveColumns(
  fileColumns: { name: string; column: string }[],
  mapping: Partial<Record<string, string>>,
): { columns: Map<RecordColumn, string>; problems: LoadProblem[] } {
  const byName = new Map<string, string>();
  for (const { name, column } of fileColumns) {
    const key = name.trim().toLowerCase();
    if (!byName.has(key)) byName.set(key, column);
  }
  const columns = new Map<RecordColumn, string>();
  const problems: LoadProblem[] = [];
  for (const column of RECORD_COLUMNS) {
    const wanted = mapping[column] ?? column;
    const found = byName.get(wanted.trim().toLowerCase());
    if (found !== undefined) columns.set(column, found);
    else if (column !== "record_id" || mapping[column] !== undefined) {
      problems.push({ line: 0, column, message: `missing column ${describeKey(column, wanted)}` });
    }
  }
  return { columns, problems };
}

/** The NDJSON keys that hold a value in at least one record, and how many lines are objects. */
async function presentColumns(
  scratch: Scratch,
  columns: RecordColumn[],
): Promise<{ present: Set<RecordColumn>; objectCount: number }> {
  const counts = columns.map((column) => `count(${column}) AS ${column}`);
  const reader = await scratch.connection.runAndReadAll(
    `SELECT count_if(NOT not_object) AS object_count, ${counts.join(", ")} FROM staged`,
  );
  const row = reader.getRowObjectsJS()[0] ?? {};
  return {
    present: new Set(columns.filter((column) => Number(row[column]) > 0)),
    objectCount: Number(row["object_count"]),
  };
}

async function countTable(scratch: Scratch, relation: string): Promise<number> {
  const reader = await scratch.connection.runAndReadAll(`SELECT count(*) AS n FROM ${relation}`);
  return Number(reader.getRowObjectsJS()[0]?.["n"] ?? 0);
}

/** The number of staged rows. */
export const countRows = (scratch: Scratch) => countTable(scratch, "staged");
