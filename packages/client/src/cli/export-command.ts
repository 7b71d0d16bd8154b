/**
 * `mdq-client export`: a range (up to 366 days) in one streamed request (CONTRACT §7), written
 * byte for byte as the service sends it to `FILE.partial`, then renamed to FILE. When the
 * connection breaks, a text format resumes after its last whole row (`after=` with the same data
 * version; the partial file only ever holds whole rows), a binary one starts again; a data
 * version gone meanwhile starts the file again. At the end the rows are checked against
 * `MDQ-Row-Count` (Parquet: its footer's row count).
 */
import { type FileHandle, open, rename, rm, stat } from "node:fs/promises";
import { EXPORT_FORMATS, type ExportFormat, type ExportRowKey, TEXT_EXPORT_FORMATS } from "@mdq/contract";
import { Command, Option } from "commander";
import { parquetMetadataAsync } from "hyparquet";
import type { MdqClient } from "../client.js";
import { MdqClientError } from "../errors.js";
import { type ExportOptions, type ExportResume, isBrokenBody } from "../record-export.js";
import type { Currency } from "../types.js";
import {
  checkRange,
  type FilterFlags,
  filterFrom,
  parseCurrency,
  parseDate,
  parseList,
} from "./cli-options.js";
import { clientFromEnv } from "./connect.js";
import { interruption } from "./interrupt.js";
import { count, type ProgressReporter, type ProgressSnapshot, progressFor } from "./progress.js";

interface ExportFlags extends FilterFlags {
  from: string;
  to: string;
  out: string;
  format: ExportFormat;
  currency?: string;
  quiet?: boolean;
}

/** Breaks in a row (no new row between them) before the export gives up. */
const MAX_BREAKS = 6;

/** Characters `neutraliseCsvCell` prefixes with `'`. */
const FORMULA_TRIGGERS = new Set(["=", "+", "-", "@", "\t", "\r"]);

/** Where the whole rows of a text chunk end, how many there are, and the last one's key. */
interface WholeRows {
  end: number;
  rows: number;
  last: ExportRowKey | null;
}

/** NDJSON: rows end at each `\n`; the last row's key from its JSON. */
function ndjsonRows(text: string): WholeRows {
  const end = text.lastIndexOf("\n") + 1;
  if (end === 0) return { end: 0, rows: 0, last: null };
  let rows = 0;
  for (let index = text.indexOf("\n"); index !== -1 && index < end; index = text.indexOf("\n", index + 1))
    rows += 1;
  const line = text.slice(text.lastIndexOf("\n", end - 2) + 1, end - 1);
  const record = JSON.parse(line) as { date: string; recordId: string };
  return { end, rows, last: { date: record.date, recordId: record.recordId } };
}

/** A CSV record's leading cells (RFC 4180), unquoted. */
function leadingCells(record: string, wanted: number): string[] {
  const cells: string[] = [];
  let index = 0;
  while (cells.length < wanted && index <= record.length) {
    if (record[index] === '"') {
      let value = "";
      index += 1;
      for (;;) {
        const quote = record.indexOf('"', index);
        value += record.slice(index, quote);
        if (record[quote + 1] === '"') {
          value += '"';
          index = quote + 2;
        } else {
          index = quote + 2;
          break;
        }
      }
      cells.push(value);
    } else {
      const comma = record.indexOf(",", index);
      const stop = comma === -1 ? record.length : comma;
      cells.push(record.slice(index, stop));
      index = stop + 1;
    }
  }
  return cells;
}

/**
 * CSV: rows end at CRLF outside quotes; the last row's key from its first two cells, a
 * neutralised record id taken back (`'=x` → `=x`; should the id itself start with `'`, the resume's
 * row count disagrees and the file starts again).
 */
function csvRows(text: string): WholeRows {
  let quoted = false;
  let rows = 0;
  let end = 0;
  let start = 0;
  let lastStart = 0;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (character === '"') quoted = !quoted;
    else if (!quoted && character === "\n" && text[index - 1] === "\r") {
      rows += 1;
      lastStart = start;
      end = index + 1;
      start = end;
    }
  }
  if (rows === 0) return { end: 0, rows: 0, last: null };
  const [recordId = "", date = ""] = leadingCells(text.slice(lastStart, end - 2), 2);
  const id =
    recordId.startsWith("'") && FORMULA_TRIGGERS.has(recordId[1] ?? "") ? recordId.slice(1) : recordId;
  return { end, rows, last: { date, recordId: id } };
}

/** What one download wrote. */
interface ExportResult {
  rows: number;
  bytes: number;
  dataVersion: string;
}

/** The number of rows in a Parquet file's footer. */
async function parquetRows(file: FileHandle): Promise<number> {
  const { size } = await file.stat();
  const metadata = await parquetMetadataAsync({
    byteLength: size,
    async slice(start: number, end?: number) {
      const length = (end ?? size) - start;
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, start);
      return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + length);
    },
  });
  return Number(metadata.num_rows);
}

/** Downloads the export into `path` (created or replaced), resuming or restarting on breaks. */
export async function downloadExport(
  client: MdqClient,
  options: ExportOptions,
  format: ExportFormat,
  path: string,
  progress: ProgressReporter,
): Promise<ExportResult> {
  const text = TEXT_EXPORT_FORMATS.has(format);
  const cut = format === "csv" ? csvRows : ndjsonRows;
  const file = await open(path, "w+");
  let finished = false;
  try {
    let resume: ExportResume | null = null;
    let expected = 0;
    let dataVersion = "";
    let rows = 0;
    let bytes = 0;
    let breaks = 0;
    let responses = 0;
    const startedAt = Date.now();
    const snapshot = (): ProgressSnapshot => ({
      rows,
      pages: responses,
      totalRows: expected,
      totalExact: true,
      window: 1,
      windows: 1,
      resumedRows: 0,
      startedAt,
    });
    const restart = async (why: string) => {
      progress.note(`${why}; starting the file again`);
      await file.truncate(0);
      resume = null;
      rows = 0;
      bytes = 0;
    };
    for (;;) {
      let response: Awaited<ReturnType<MdqClient["openExport"]>>;
      try {
        response = await client.openExport(options, format, resume);
      } catch (error) {
        if (error instanceof MdqClientError && error.code === "DATA_VERSION_GONE" && resume !== null) {
          await restart(`the data changed since ${(resume as ExportResume).dataVersion}`);
          continue;
        }
        throw error;
      }
      responses += 1;
      if (resume === null) {
        expected = response.rowCount;
        dataVersion = response.dataVersion;
      } else if (rows + response.rowCount !== expected) {
        await restart(`the resumed export holds ${response.rowCount} rows, not the ${expected - rows} left`);
        continue;
      }
      let carry = "";
      // Every CSV body starts with its header line: the file holds it once anything was written
      // (a break before the first whole line leaves the file empty, and the next body's header
      // goes in).
      let skipHeader = format === "csv" && bytes > 0;
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body) {
          if (!text) {
            await file.write(chunk, 0, chunk.byteLength, bytes);
            bytes += chunk.byteLength;
            continue;
          }
          carry += decoder.decode(chunk, { stream: true });
          if (skipHeader) {
            const endOfHeader = carry.indexOf("\r\n");
            if (endOfHeader === -1) continue;
            carry = carry.slice(endOfHeader + 2);
            skipHeader = false;
          }
          const whole = cut(carry);
          if (whole.end === 0) continue;
          // The CSV header line is the first "row" of an empty file, not a record.
          const header = format === "csv" && bytes === 0 ? 1 : 0;
          const written = Buffer.from(carry.slice(0, whole.end));
          // At an explicit position: after a restart the file was truncated, its offset was not.
          await file.write(written, 0, written.byteLength, bytes);
          bytes += written.byteLength;
          rows += whole.rows - header;
          if (whole.last !== null && (header === 0 || whole.rows > 1))
            resume = { after: whole.last, dataVersion: response.dataVersion };
          else if (resume === null) resume = { after: null, dataVersion: response.dataVersion };
          carry = carry.slice(whole.end);
          breaks = 0;
          progress.update(snapshot());
        }
      } catch (error) {
        if (!isBrokenBody(error, options.signal)) throw error;
        breaks += 1;
        if (breaks >= MAX_BREAKS) {
          throw new MdqClientError("NETWORK", `the export broke ${breaks} times in a row: ${String(error)}`);
        }
        if (!text) await restart("the connection broke");
        else {
          resume ??= { after: null, dataVersion: response.dataVersion };
          progress.note(`the connection broke after ${count(rows)} rows; resuming after the last whole row`);
        }
        continue;
      }
      if (carry !== "") throw new MdqClientError("PROTOCOL", "the export's body ended inside a row");
      await file.sync();
      const held = format === "parquet" ? await parquetRows(file) : text ? rows : expected;
      if (held !== expected) {
        throw new MdqClientError(
          "PROTOCOL",
          `the export's MDQ-Row-Count says ${expected} rows, the file holds ${held}`,
        );
      }
      progress.update({ ...snapshot(), rows: expected });
      finished = true;
      return { rows: expected, bytes, dataVersion };
    }
  } finally {
    await file.close();
    // A run that failed before its first byte (bad flags, 403, a wrong secret) leaves nothing.
    if (!finished && (await stat(path).catch(() => null))?.size === 0) await rm(path, { force: true });
  }
}

/** `mdq-client export --from D --to D --out FILE [--format F] [--currency C] [filters]`. */
export function exportCommand(): Command {
  return new Command("export")
    .description(
      "Download a range (up to 366 days) in one streamed request: the service's own NDJSON, CSV, Parquet " +
        "or Arrow bytes, resumed after the last whole row when the connection breaks, checked against " +
        "MDQ-Row-Count, written to FILE.partial and renamed to FILE when complete.",
    )
    .requiredOption("--from <date>", "first day, YYYY-MM-DD (inclusive)", parseDate)
    .requiredOption("--to <date>", "last day, YYYY-MM-DD (inclusive); at most 366 days", parseDate)
    .requiredOption("--out <file>", "the output file")
    .addOption(new Option("--format <format>", "file format").choices(EXPORT_FORMATS).default("ndjson"))
    .option("--currency <code>", "currency of spend and revenue (default EUR)", parseCurrency)
    .option("--markets <list>", "only these markets, e.g. GB,DE", parseList)
    .option("--data-sources <list>", "only these data sources, e.g. google_ads,meta_ads", parseList)
    .option("--channels <list>", "only these channels", parseList)
    .option("--campaign-ids <list>", "only these campaigns", parseList)
    .option("--quiet", "no progress on stderr")
    .action(async (flags: ExportFlags) => {
      checkRange(flags.from, flags.to);
      const client = clientFromEnv(process.env);
      const progress = progressFor(process.stderr, flags.quiet ? { quiet: true } : {});
      const filter = filterFrom(flags);
      const partial = `${flags.out}.partial`;
      const result = await downloadExport(
        client,
        {
          from: flags.from,
          to: flags.to,
          signal: interruption.signal,
          ...(flags.currency === undefined ? {} : { currency: flags.currency as Currency }),
          ...(filter === null ? {} : { filter }),
        },
        flags.format,
        partial,
        progress,
      );
      await rename(partial, flags.out);
      progress.done(
        {
          rows: result.rows,
          pages: 1,
          totalRows: result.rows,
          totalExact: true,
          window: 1,
          windows: 1,
          resumedRows: 0,
          startedAt: 0,
        },
        `exported ${count(result.rows)} rows (${count(result.bytes)} bytes, data version ${result.dataVersion}) to ${flags.out}`,
      );
    });
}
