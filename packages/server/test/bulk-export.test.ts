/**
 * The bulk export (CONTRACT §7, docs/api.md), over real HTTP on both stores: every format holds
 * exactly the rows of a full GraphQL page walk with the same values; `after=` resumes to an
 * identical body; a load while a response streams does not tear it; a failure after the first
 * byte leaves a body that clients see as failed; aborted exports leave the pool whole; every
 * refusal has its code and status.
 */
import assert from "node:assert/strict";
import { readdir, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { DuckDBInstance } from "@duckdb/node-api";
import { MAX_RANGE_DAYS, neutraliseCsvCell, RECORD_FIELDS } from "@mdq/contract";
import { tableFromIPC } from "apache-arrow";
import { stringify } from "csv-stringify/sync";
import pg from "pg";
import { addDays } from "../src/calendar.js";
import { buildService, type Service } from "../src/server.js";
import type { Store, StoredRecord } from "../src/store/model/store.js";
import { PARQUET_ROW_GROUP_ROWS } from "../src/store/reads/export/export-sql.js";
import {
  FIRST_WINDOW_ROWS,
  type RecordExport,
  type RecordExports,
} from "../src/store/reads/export/record-export.js";
import {
  changesRegion,
  duckdbEngine,
  type Engine as HarnessEngine,
  postgresEngine,
} from "./changes-harness.js";

/**
 * Days before the demo's range holding a bulk of rows (EUR, so no rate is needed): bodies far larger
 * than socket buffers, and more rows than the first export window and a later one hold
 * (record-export.ts), so that a text export writes windows ahead (store/duckdb/duckdb-export.ts).
 */
const BULK_DAYS = 300;
const BULK_ROWS_PER_DAY = 400;

/** The bulk rows: `BULK_ROWS_PER_DAY` a day, names long enough to make a big body. */
function* bulkRecords(firstDay: string): Generator<StoredRecord> {
  for (let day = 0; day < BULK_DAYS; day += 1) {
    const date = addDays(firstDay, day);
    for (let index = 0; index < BULK_ROWS_PER_DAY; index += 1) {
      yield {
        recordId: `bulk-${date}-${String(index).padStart(4, "0")}`,
        date,
        market: "GB",
        dataSource: "google_ads",
        channel: "search",
        campaignId: `c-${index}`,
        campaignName: `Bulk campaign ${index} ${"x".repeat(120)}`,
        impressions: 1000 + index,
        clicks: index,
        spendE4: BigInt(index * 12345),
        conversionsE4: BigInt(index * 10),
        revenueE4: BigInt(index * 54321),
        currency: "EUR",
      };
    }
  }
}

/** docs/api.md's CSV: CRLF line ends; a field quoted when it holds a comma, quote, CR or LF. */
const RFC_4180 = { record_delimiter: "\r\n", quoted_match: /[\r\n]/ } as const;

/** `rows` as docs/api.md's CSV: a header line, text cells neutralised, numbers as they are. */
function csvOf(rows: readonly Row[]): string {
  const cells = rows.map((row) =>
    RECORD_FIELDS.map((field) =>
      typeof row[field] === "number" ? row[field] : neutraliseCsvCell(String(row[field])),
    ),
  );
  return stringify([[...RECORD_FIELDS], ...cells], RFC_4180);
}

/**
 * Text a load accepts that CSV and JSON must escape: formula-like starts (neutralised in CSV),
 * the separators and quotes RFC 4180 quotes, the tab, line feed and carriage return a name may
 * hold (loads refuse only the other control characters), backslashes and non-ASCII text.
 */
const HOSTILE_TEXTS = [
  "=SUM(A1:A2)",
  "+44 20 7946 0000",
  "-minus",
  "@handle",
  "\tTabbed",
  "\rCarriage",
  "comma, inside",
  'say "hi"',
  "line\nbreak",
  "crlf\r\nend",
  'back\\slash "and" quote',
  "naïve – ✓ 😀",
  "'already quoted",
  " padded ",
  '"=quoted formula"',
];

/**
 * Days of plain rows (one name with a line break), more than the export's first window holds, so
 * that the day after them, one record per hostile text, is written by the engine's COPY and the
 * first window's line break by the format's writer from typed rows (record-export.ts).
 */
const HOSTILE_FILLER_DAYS = Math.ceil(FIRST_WINDOW_ROWS / BULK_ROWS_PER_DAY) + 1;

/** The filler days from `firstDay`, then the hostile texts' day, in their campaign ids and names. */
function* hostileRecords(firstDay: string): Generator<StoredRecord> {
  const texts = [
    ...Array.from({ length: HOSTILE_FILLER_DAYS * BULK_ROWS_PER_DAY }, (_, index) =>
      index === 0 ? "first\nwindow" : "plain",
    ),
    ...HOSTILE_TEXTS,
  ];
  for (const [index, text] of texts.entries()) {
    const day = Math.min(Math.floor(index / BULK_ROWS_PER_DAY), HOSTILE_FILLER_DAYS);
    yield {
      recordId: `hostile-${String(index).padStart(5, "0")}`,
      date: addDays(firstDay, day),
      market: "GB",
      dataSource: "google_ads",
      channel: "search",
      campaignId: `${text} ${index}`,
      campaignName: text,
      impressions: 10 + index,
      clicks: index,
      spendE4: BigInt(-index * 12345),
      conversionsE4: BigInt(index * 10),
      revenueE4: BigInt(index * 54321),
      currency: "EUR",
    };
  }
}

/**
 * Rows of one day larger than a DuckDB row group (122,880 rows), so that the export reads the day
 * (one window: a day is never split) on both of the store's threads.
 */
const BIG_DAY_ROWS = 200_000;

/** `BIG_DAY_ROWS` records of `date`, their ids in a scrambled order. */
function* bigDayRecords(date: string): Generator<StoredRecord> {
  for (let index = 0; index < BIG_DAY_ROWS; index += 1) {
    const id = (index * 7919) % BIG_DAY_ROWS;
    yield {
      recordId: `big-${String(id).padStart(6, "0")}`,
      date,
      market: "GB",
      dataSource: "google_ads",
      channel: "search",
      campaignId: `c-${id}`,
      campaignName: `Big day campaign ${id % 500}`,
      impressions: id,
      clicks: id % 100,
      spendE4: BigInt(id * 101),
      conversionsE4: BigInt(id % 1000),
      revenueE4: BigInt(id * 307),
      currency: "EUR",
    };
  }
}

/** `chunks`, failing after the first. */
async function* failingAfterFirst<Chunk>(chunks: AsyncIterable<Chunk>): AsyncGenerator<Chunk> {
  for await (const chunk of chunks) {
    yield chunk;
    throw new Error("injected failure after the first chunk");
  }
}

/**
 * The store, its exports failing after their first chunk of rows (a batch, or the engine's
 * bytes): a fault injected at the capability's interface (DuckDB has no way to cut one connection
 * from outside, as PostgreSQL has).
 */
function failingAfterFirstBatch(store: Store & RecordExports): Store {
  const faulty = Object.create(store) as Store & RecordExports;
  faulty.openRecordExport = async (query) => {
    const opened = await store.openRecordExport(query);
    const failing: RecordExport = {
      rowCount: opened.rowCount,
      dataVersion: opened.dataVersion,
      engineBody(format) {
        const body = opened.engineBody(format);
        return body === null ? null : failingAfterFirst(body);
      },
      batches: () => failingAfterFirst(opened.batches()),
      close: () => opened.close(),
    };
    return failing;
  };
  return faulty;
}

const DAYS = 40;
const POOL_SIZE = 4;
/** Longer than the PostgreSQL store's statement timeout (2 s) plus node-postgres's slack (5 s). */
const STATEMENT_OUTLASTING_MS = 8000;
const EXPORT_CONCURRENCY = 3;
const RECORDS = `query($c: ID!, $r: DateRangeInput!, $cur: Currency, $p: Int!) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, pagination: {page: $p, pageSize: 5000},
    sort: [{field: DATE_DAY, direction: ASC}]) { ${RECORD_FIELDS.join(" ")} }
}`;

type Row = Record<string, string | number>;

/** A store of the changes harness, with what the export's tests do to its connections. */
type Engine = HarnessEngine & {
  name: "duckdb" | "postgres";
  /** Cuts the export's connection mid-stream, as a database failure would. */
  failExports(): Promise<void>;
  /** Connections of the store's pool still in a transaction or a statement after up to 5 s (none once exports end). */
  openTransactions(): Promise<number>;
};

function exportDuckdbEngine(): Engine {
  return { ...duckdbEngine("mdq-export-"), failExports: async () => {}, openTransactions: async () => 0 };
}

function exportPostgresEngine(): Engine {
  // A short statement timeout, so that a test outlasting node-postgres's client-side one (the
  // timeout plus 5 s) shows that an export is exempt from both.
  const engine = postgresEngine("export", { poolSize: POOL_SIZE, statementTimeoutMs: 2000 });
  const sql = async (text: string) => {
    const client = new pg.Client({ connectionString: engine.databaseUrl() });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    ...engine,
    async failExports() {
      await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COPY (%'`);
    },
    openTransactions() {
      // An export whose client left ends its snapshot after the statement it runs: waited for.
      return untilNone(async () => {
        const rows = await sql(`SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND (state LIKE 'idle in transaction%' OR (state = 'active' AND backend_type = 'client backend' AND query NOT LIKE '%pg_stat_activity%'))`);
        return Number(rows[0].n);
      });
    },
  };
}

/**
 * What `count` reads (a number, or a list's length), read again every 100 ms until it is none or
 * 5 s have passed: the last reading.
 */
async function untilNone<T extends number | readonly unknown[]>(count: () => Promise<T>): Promise<T> {
  let left = await count();
  for (let attempt = 1; attempt < 50 && (typeof left === "number" ? left : left.length) > 0; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await count();
  }
  return left;
}

/**
 * This process's export work directories (DuckDB writes an export's windows into files there)
 * still in the temporary directory after waiting up to 5 s for them to go.
 */
function exportWorkDirsLeft(): Promise<string[]> {
  return untilNone(async () =>
    (await readdir(tmpdir())).filter((name) => name.startsWith(`mdq-export-${process.pid}-`)),
  );
}

/** The rows of a Parquet export's file, as GraphQL gives them (numbers as doubles, dates as text). */
async function parquetRows(path: string): Promise<Row[]> {
  const duckdb = await (await DuckDBInstance.create(":memory:")).connect();
  try {
    return (
      await duckdb.runAndReadAll(`SELECT recordId, strftime(date, '%Y-%m-%d') AS date, market, dataSource, channel,
        campaignId, campaignName, CAST(impressions AS DOUBLE) AS impressions, CAST(clicks AS DOUBLE) AS clicks,
        CAST(spend AS DOUBLE) AS spend, conversions, CAST(revenue AS DOUBLE) AS revenue, currency
        FROM read_parquet('${path}')`)
    ).getRowObjectsJS() as Row[];
  } finally {
    duckdb.closeSync();
  }
}

/** An Arrow IPC stream's rows as GraphQL's records: dates as text, Int64 values as numbers. */
function arrowRows(body: Buffer): Row[] {
  return tableFromIPC(body)
    .toArray()
    .map((row) => {
      const plain = row.toJSON() as Record<string, unknown>;
      return Object.fromEntries(
        RECORD_FIELDS.map((field) => {
          const value = plain[field];
          if (field === "date") return [field, new Date(value as number).toISOString().slice(0, 10)];
          return [field, typeof value === "bigint" ? Number(value) : value];
        }),
      ) as Row;
    });
}

/** An HTTP GET whose body is read to its end, or to the connection's failure. */
interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Whether the body arrived whole (its final chunk came); false when the connection was cut. */
  complete: boolean;
}

function rawGet(
  url: string,
  headers: Record<string, string>,
  onFirstChunk?: () => Promise<void>,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      let paused = false;
      response.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        if (onFirstChunk && !paused) {
          paused = true;
          response.pause();
          onFirstChunk().then(
            () => response.resume(),
            (error) => reject(error),
          );
        }
      });
      const settle = () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
          complete: response.complete,
        });
      response.on("end", settle);
      response.on("error", settle);
      response.on("aborted", () => undefined);
      response.on("close", settle);
    });
    request.on("error", reject);
    request.end();
  });
}

// Known issue (issue 18's closing note): after the PostgreSQL export tests this file's process has
// no JavaScript handle left open yet does not exit (a native reference; cause not found yet). So
// that the suite can never hang on it, the file ends itself a few seconds after its last hook; its
// results are already reported by then, and a failure still fails the run.
after(() => {
  setTimeout(() => process.exit(), 5000).unref();
});

for (const engine of [exportDuckdbEngine(), exportPostgresEngine()]) {
  describe(`bulk export: ${engine.name}`, () => {
    const region = changesRegion(engine, {
      days: DAYS,
      scale: 2,
      // One lane: exports take turns at the engine on any machine (export/export-turns.ts). One
      // brand may take every export place, and a queued export waits 1 s for its turn before its
      // 429 (fair-lanes.test.ts drives the queue and the per-brand cap). Every export streams in
      // the export lane, however few its rows (fair-lanes.test.ts drives page-sized exports).
      config: {
        exportConcurrency: EXPORT_CONCURRENCY,
        exportPerBrand: EXPORT_CONCURRENCY,
        exportSmallRows: 0,
        exportLanes: 1,
        queueMaxWaitMs: 1000,
      },
      async seed(store, today) {
        const bulkFirst = addDays(today, -DAYS - BULK_DAYS);
        await store.replaceRecords("brand-acme", bulkRecords(bulkFirst), {
          processingDate: today,
          source: "bulk",
        });
        await store.replaceRecords(
          "brand-acme",
          bigDayRecords(addDays(bulkFirst, -HOSTILE_FILLER_DAYS - 2)),
          {
            processingDate: today,
            source: "big-day",
          },
        );
        await store.replaceRecords(
          "brand-acme",
          hostileRecords(addDays(bulkFirst, -HOSTILE_FILLER_DAYS - 1)),
          {
            processingDate: today,
            source: "hostile",
          },
        );
      },
    });
    const token = (appClientId?: string) => region.token(appClientId);
    const first = () => region.first();
    const last = () => region.last();
    /** The bulk days before the demo's, and the address the service listens on. */
    const bulk = { from: "", to: "" };
    let base: string;

    function exportUrl(parameters: Record<string, string>): string {
      const query = new URLSearchParams({ clientId: "brand-acme", from: first(), to: last(), ...parameters });
      return `${base}/export/marketing-records?${query}`;
    }

    async function exportOf(
      parameters: Record<string, string> = {},
      headers: Record<string, string> = {},
      appClientId?: string,
    ): Promise<RawAnswer> {
      return rawGet(exportUrl(parameters), {
        authorization: `Bearer ${await token(appClientId)}`,
        ...headers,
      });
    }

    /** Every record of the range through GraphQL pages (ascending day sort), and the walk's dataVersion. */
    async function walk(
      currency = "EUR",
      range = { from: first(), to: last() },
    ): Promise<{ rows: Row[]; lines: string[]; dataVersion: string }> {
      const rows: Row[] = [];
      const lines: string[] = [];
      let dataVersion = "";
      for (let page = 1; ; page += 1) {
        const response = await fetch(`${base}/graphql`, {
          method: "POST",
          headers: { authorization: `Bearer ${await token()}`, "content-type": "application/json" },
          body: JSON.stringify({
            query: RECORDS,
            variables: { c: "brand-acme", r: range, cur: currency, p: page },
          }),
        });
        const text = await response.text();
        const body = JSON.parse(text);
        assert.equal(body.errors, undefined, text);
        const info = body.extensions.pageInfo.marketingRecords;
        dataVersion = info.dataVersion;
        rows.push(...body.data.marketingRecords);
        // GraphQL's own bytes of each record, to compare NDJSON lines with byte for byte.
        const list = text.slice(text.indexOf("[") + 1, text.indexOf("]}"));
        if (list.length > 0) lines.push(...list.split(/(?<=\}),(?=\{"recordId")/));
        if (!info.hasNextPage) break;
      }
      return { rows, lines, dataVersion };
    }

    before(async () => {
      bulk.from = addDays(first(), -BULK_DAYS);
      bulk.to = addDays(first(), -1);
      base = (await region.service.app.listen({ host: "127.0.0.1", port: 0 })).replace(
        "localhost",
        "127.0.0.1",
      );
    });

    it("writes NDJSON lines byte-identical to GraphQL's records, with the row count and data version", async () => {
      const walked = await walk();
      const answer = await exportOf();
      assert.equal(answer.status, 200);
      assert.equal(answer.complete, true);
      assert.equal(answer.headers["content-type"], "application/x-ndjson");
      assert.equal(answer.headers["mdq-data-version"], walked.dataVersion);
      assert.equal(answer.headers["mdq-row-count"], String(walked.rows.length));
      assert.ok(walked.rows.length > 1000, `only ${walked.rows.length} rows`);
      const lines = answer.body.toString("utf8").split("\n");
      assert.equal(lines.pop(), "");
      assert.deepEqual(lines, walked.lines);
    });

    it("writes a range of several windows or reads as GraphQL's walk of it, alone (written or read ahead) or beside other exports", async () => {
      const range = { from: bulk.from, to: bulk.to };
      // GraphQL answers MAX_RANGE_DAYS a request: the range walked that many days at a time.
      const walked = { rows: [] as Row[], lines: [] as string[] };
      for (let offset = 0; offset < BULK_DAYS; offset += MAX_RANGE_DAYS) {
        const from = addDays(range.from, offset);
        const to = addDays(range.from, Math.min(offset + MAX_RANGE_DAYS, BULK_DAYS) - 1);
        const part = await walk("EUR", { from, to });
        walked.rows.push(...part.rows);
        walked.lines.push(...part.lines);
      }
      assert.equal(walked.rows.length, BULK_DAYS * BULK_ROWS_PER_DAY);
      const alone = await exportOf(range);
      assert.equal(alone.complete, true);
      assert.deepEqual(alone.body.toString("utf8").split("\n"), [...walked.lines, ""]);
      // Beside other exports each writes its windows one after another: the same bytes.
      const beside = await Promise.all(Array.from({ length: EXPORT_CONCURRENCY }, () => exportOf(range)));
      for (const answer of beside) {
        assert.equal(answer.complete, true);
        assert.ok(answer.body.equals(alone.body));
      }
      // Arrow's walk reads its next statement while it writes the last one's batches, alone only.
      const arrow = await exportOf({ ...range, format: "arrow" });
      assert.equal(arrow.complete, true);
      assert.deepEqual(arrowRows(arrow.body), walked.rows);
      const arrowBeside = await Promise.all(
        Array.from({ length: EXPORT_CONCURRENCY }, () => exportOf({ ...range, format: "arrow" })),
      );
      for (const answer of arrowBeside) {
        assert.equal(answer.complete, true);
        assert.ok(answer.body.equals(arrow.body));
      }
      const csv = await exportOf({ ...range, format: "csv" });
      const csvIds = csv.body
        .toString("utf8")
        .split("\r\n")
        .slice(1, -1)
        .map((line) => line.split(",")[0]);
      assert.deepEqual(
        csvIds,
        walked.rows.map((row) => row["recordId"]),
      );
    });

    it("converts money exactly as marketingRecords does, in another currency", async () => {
      const walked = await walk("JPY");
      const answer = await exportOf({ currency: "JPY" });
      const rows = answer.body
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line));
      assert.deepEqual(rows, walked.rows);
    });

    it("writes CSV with a header, RFC 4180 quoting, CRLF and neutralised text cells", async () => {
      const walked = await walk();
      const answer = await exportOf({ format: "csv" });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "text/csv; charset=utf-8; header=present");
      const expected = csvOf(walked.rows);
      assert.equal(answer.body.toString("utf8"), expected);
      assert.ok(expected.startsWith(`${RECORD_FIELDS.join(",")}\r\n`));
    });

    it("escapes hostile text: JSON as GraphQL writes it, CSV quoted and neutralised", async () => {
      const range = { from: addDays(bulk.from, -HOSTILE_FILLER_DAYS - 1), to: addDays(bulk.from, -1) };
      const walked = await walk("EUR", range);
      assert.equal(walked.rows.length, HOSTILE_FILLER_DAYS * BULK_ROWS_PER_DAY + HOSTILE_TEXTS.length);
      const ndjson = await exportOf(range);
      assert.deepEqual(ndjson.body.toString("utf8").split("\n"), [...walked.lines, ""]);
      const csv = await exportOf({ ...range, format: "csv" });
      const expected = csvOf(walked.rows);
      assert.equal(csv.body.toString("utf8"), expected);
      const parquet = await exportOf({ ...range, format: "parquet" });
      const path = join(region.work, `export-${engine.name}-hostile.parquet`);
      await writeFile(path, parquet.body);
      assert.deepEqual(await parquetRows(path), walked.rows);
    });

    it("keeps (date, recordId) order in every format when one day outgrows a row group", async () => {
      const day = addDays(bulk.from, -HOSTILE_FILLER_DAYS - 2);
      const expected = Array.from({ length: BIG_DAY_ROWS }, (_, id) => `big-${String(id).padStart(6, "0")}`);
      const ndjson = await exportOf({ from: day, to: day });
      const ndjsonIds = ndjson.body
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line).recordId);
      assert.equal(ndjsonIds.length, BIG_DAY_ROWS);
      assert.ok(
        ndjsonIds.every((id, index) => id === expected[index]),
        "NDJSON out of order",
      );
      const csv = await exportOf({ from: day, to: day, format: "csv" });
      const csvIds = csv.body
        .toString("utf8")
        .split("\r\n")
        .slice(1, -1)
        .map((line) => line.slice(0, line.indexOf(",")));
      assert.equal(csvIds.length, BIG_DAY_ROWS);
      assert.ok(
        csvIds.every((id, index) => id === expected[index]),
        "CSV out of order",
      );
      const parquet = await exportOf({ from: day, to: day, format: "parquet" });
      const path = join(region.work, `export-${engine.name}-big-day.parquet`);
      await writeFile(path, parquet.body);
      const parquetIds = (await parquetRows(path)).map((row) => row["recordId"]);
      assert.equal(parquetIds.length, BIG_DAY_ROWS);
      assert.ok(
        parquetIds.every((id, index) => id === expected[index]),
        "Parquet out of order",
      );
      // Arrow walks the day larger than its windows page after page, then the days after it.
      const range = { from: day, to: addDays(day, 3) };
      const walkedIds = (await exportOf(range)).body
        .toString("utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line).recordId);
      assert.ok(walkedIds.length > BIG_DAY_ROWS);
      const arrow = await exportOf({ ...range, format: "arrow" });
      assert.deepEqual([...tableFromIPC(arrow.body).getChild("recordId")!].map(String), walkedIds);
    });

    it("splits a first day larger than the first window, and resumes inside it, in every format", async () => {
      const day = addDays(bulk.from, -HOSTILE_FILLER_DAYS - 2);
      const expected = Array.from({ length: BIG_DAY_ROWS }, (_, id) => `big-${String(id).padStart(6, "0")}`);
      const whole = await exportOf({ from: day, to: day });
      /** The `MDQ-Resume` token of each format's export of the day: a resume repeats its query. */
      const resumeOf = async (format: string) =>
        String((await exportOf({ from: day, to: day, format })).headers["mdq-resume"]);
      const tokens = { arrow: await resumeOf("arrow"), parquet: await resumeOf("parquet") };
      // Inside the first window (its first FIRST_WINDOW_ROWS rows), at its end, and past it.
      for (const cut of [FIRST_WINDOW_ROWS >> 1, FIRST_WINDOW_ROWS - 1, FIRST_WINDOW_ROWS + 7]) {
        const after = `${day},${expected[cut]}`;
        const rest = { from: day, to: day, after, resume: String(whole.headers["mdq-resume"]) };
        const ndjson = await exportOf(rest);
        assert.equal(ndjson.headers["mdq-row-count"], String(BIG_DAY_ROWS - cut - 1));
        const ids = ndjson.body
          .toString("utf8")
          .trimEnd()
          .split("\n")
          .map((line) => JSON.parse(line).recordId);
        assert.deepEqual(ids, expected.slice(cut + 1), `NDJSON after row ${cut}`);
        const arrow = await exportOf({ ...rest, format: "arrow", resume: tokens.arrow });
        const arrowIds = [...tableFromIPC(arrow.body).getChild("recordId")!].map(String);
        assert.deepEqual(arrowIds, expected.slice(cut + 1), `Arrow after row ${cut}`);
        const parquet = await exportOf({ ...rest, format: "parquet", resume: tokens.parquet });
        const path = join(region.work, `export-${engine.name}-big-day-${cut}.parquet`);
        await writeFile(path, parquet.body);
        const parquetIds = (await parquetRows(path)).map((row) => row["recordId"]);
        assert.deepEqual(parquetIds, expected.slice(cut + 1), `Parquet after row ${cut}`);
      }
    });

    it("writes Parquet with DATE and DECIMAL columns holding the walk's rows", async () => {
      const walked = await walk("GBP");
      const answer = await exportOf({ format: "parquet", currency: "GBP" });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "application/vnd.apache.parquet");
      const path = join(region.work, `export-${engine.name}.parquet`);
      await writeFile(path, answer.body);
      const duckdb = await (await DuckDBInstance.create(":memory:")).connect();
      const types = (
        await duckdb.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)
      ).getRowObjectsJS();
      const typeOf = Object.fromEntries(types.map((row) => [row["column_name"], row["column_type"]]));
      assert.equal(typeOf["date"], "DATE");
      assert.equal(typeOf["spend"], "DECIMAL(18,2)");
      assert.equal(typeOf["revenue"], "DECIMAL(18,2)");
      duckdb.closeSync();
      assert.deepEqual(await parquetRows(path), walked.rows);
    });

    it("writes Parquet in row groups of about PARQUET_ROW_GROUP_ROWS rows (docs/api.md), its windows' rows in order", async () => {
      const answer = await exportOf({ from: bulk.from, to: bulk.to, format: "parquet" });
      assert.equal(answer.status, 200);
      const path = join(region.work, `export-${engine.name}-bulk.parquet`);
      await writeFile(path, answer.body);
      // The range is several export windows (record-export.ts): their rows, in NDJSON's order.
      const ndjson = await exportOf({ from: bulk.from, to: bulk.to });
      const ndjsonIds = ndjson.body
        .toString("utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line).recordId);
      const parquetIds = (await parquetRows(path)).map((row) => row["recordId"]);
      assert.equal(parquetIds.length, ndjsonIds.length);
      assert.ok(
        parquetIds.every((id, index) => id === ndjsonIds[index]),
        "the Parquet rows are the NDJSON rows, in order",
      );
      const duckdb = await (await DuckDBInstance.create(":memory:")).connect();
      const groups = (
        await duckdb.runAndReadAll(`SELECT row_group_id, any_value(row_group_num_rows) AS rows
          FROM parquet_metadata('${path}') GROUP BY row_group_id ORDER BY row_group_id`)
      ).getRowObjectsJS();
      duckdb.closeSync();
      const rows = groups.map((group) => Number(group["rows"]));
      assert.equal(
        rows.reduce((sum, count) => sum + count, 0),
        BULK_DAYS * BULK_ROWS_PER_DAY,
      );
      // DuckDB's ROW_GROUP_SIZE is a target: a group ends with the chunk of rows that reaches it.
      assert.ok(rows.length >= 4, rows.join(" "));
      assert.ok(
        rows.every((count) => count <= PARQUET_ROW_GROUP_ROWS * 1.25),
        rows.join(" "),
      );
    });

    it("writes an Arrow IPC stream holding the walk's rows", async () => {
      const walked = await walk();
      const answer = await exportOf({ format: "arrow" });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers["content-type"], "application/vnd.apache.arrow.stream");
      assert.deepEqual(arrowRows(answer.body), walked.rows);
    });

    it("compresses the text formats with gzip when asked", async () => {
      const plain = await exportOf({ format: "csv" });
      const packed = await exportOf({ format: "csv" }, { "accept-encoding": "gzip" });
      assert.equal(packed.headers["content-encoding"], "gzip");
      assert.equal(packed.headers["mdq-row-count"], plain.headers["mdq-row-count"]);
      assert.deepEqual(gunzipSync(packed.body), plain.body);
      const parquet = await exportOf({ format: "parquet" }, { "accept-encoding": "gzip" });
      assert.equal(parquet.headers["content-encoding"], undefined);
    });

    it("resumes after a row with the same data version to an identical body", async () => {
      const whole = await exportOf();
      const lines = whole.body.toString("utf8").trimEnd().split("\n");
      const version = String(whole.headers["mdq-data-version"]);
      const resume = String(whole.headers["mdq-resume"]);
      for (const cut of [0, 1, Math.floor(lines.length / 2), lines.length - 2, lines.length - 1]) {
        const row = JSON.parse(lines[cut]!);
        const rest = await exportOf({ after: `${row.date},${row.recordId}`, resume });
        assert.equal(rest.status, 200);
        assert.equal(rest.headers["mdq-row-count"], String(lines.length - cut - 1));
        assert.equal(rest.headers["mdq-data-version"], version);
        const joined = [
          ...lines.slice(0, cut + 1),
          ...(rest.body.length > 0 ? rest.body.toString("utf8").trimEnd().split("\n") : []),
        ];
        assert.deepEqual(joined, lines, `cut after line ${cut}`);
      }
      const csv = await exportOf({ format: "csv" });
      const csvLines = csv.body.toString("utf8").split("\r\n");
      const middle = JSON.parse(lines[100]!);
      const restCsv = await exportOf({
        format: "csv",
        after: `${middle.date},${middle.recordId}`,
        resume: String(csv.headers["mdq-resume"]),
      });
      const restLines = restCsv.body.toString("utf8").split("\r\n");
      // The resumed body has its own header line; the rows after it continue the first body's.
      assert.equal(restLines[0], csvLines[0]);
      assert.deepEqual([...csvLines.slice(0, 102), ...restLines.slice(1)], csvLines);
    });

    it("refuses to resume a data version that is gone: 409 DATA_VERSION_GONE", async () => {
      const before = await exportOf({ format: "csv" });
      const version = String(before.headers["mdq-data-version"]);
      await region.load("restated.csv", [
        `restated-1,${last()},GB,google_ads,search,c-r,Restated,10,1,10000,0,0,GBP`,
      ]);
      const answer = await exportOf({
        format: "csv",
        after: `${first()},x`,
        resume: String(before.headers["mdq-resume"]),
      });
      assert.equal(answer.status, 409);
      const body = JSON.parse(answer.body.toString("utf8"));
      assert.equal(body.errors[0].extensions.code, "DATA_VERSION_GONE");
      assert.match(body.errors[0].message, /start the export again/);
      const fresh = await exportOf();
      assert.notEqual(fresh.headers["mdq-data-version"], version);
    });

    it("streams one snapshot even when a load lands while it streams", async () => {
      const range = { from: bulk.from, to: bulk.to };
      const reference = await exportOf(range);
      assert.ok(reference.body.length > 16 * 1024 * 1024, `${reference.body.length} bytes`);
      const answer = await rawGet(
        exportUrl(range),
        { authorization: `Bearer ${await token()}` },
        async () => {
          // A slow client: longer than any statement or query timeout of the store.
          await new Promise((resolve) => setTimeout(resolve, STATEMENT_OUTLASTING_MS));
          // Replace the range's last day (the body's end, not yet read) while the response streams.
          await region.load("during.csv", [
            `during-1,${bulk.to},GB,google_ads,search,c-d,During,10,1,10000,0,0,EUR`,
          ]);
        },
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.complete, true);
      assert.equal(answer.headers["mdq-data-version"], reference.headers["mdq-data-version"]);
      assert.ok(answer.body.equals(reference.body));
      const later = await exportOf(range);
      assert.notEqual(later.headers["mdq-data-version"], reference.headers["mdq-data-version"]);
      assert.match(later.body.subarray(-4096).toString("utf8"), /"recordId":"during-1"/);
    });

    it("answers every refusal before the first byte with its code and status", async () => {
      const cases: [Record<string, string>, number, string, string?][] = [
        [{ clientId: "brand-globex" }, 403, "FORBIDDEN"],
        [{ markets: "US,ZZ" }, 403, "FORBIDDEN"],
        [{ from: addDays(last(), -366) }, 400, "DATE_RANGE_TOO_LONG"],
        [{ from: last(), to: first() }, 400, "INVALID_DATE_RANGE"],
        [{ from: "2026-02-30" }, 400, "BAD_USER_INPUT"],
        [{ format: "xlsx" }, 400, "BAD_USER_INPUT"],
        [{ currency: "XXX" }, 400, "BAD_USER_INPUT"],
        [{ colour: "red" }, 400, "BAD_USER_INPUT"],
        [{ channels: "" }, 400, "BAD_USER_INPUT"],
        [{ after: `${first()},r-1` }, 400, "BAD_USER_INPUT"],
        [{ after: "yesterday", dataVersion: "uk.1" }, 400, "BAD_USER_INPUT"],
        [{ dataVersion: "us.3" }, 400, "INVALID_DATA_VERSION"],
      ];
      for (const [parameters, status, code] of cases) {
        const answer = await exportOf(parameters);
        assert.equal(answer.status, status, JSON.stringify(parameters));
        const body = JSON.parse(answer.body.toString("utf8"));
        assert.equal(body.errors[0].extensions.code, code, JSON.stringify(parameters));
        assert.equal(typeof body.errors[0].message, "string");
      }
      const anonymous = await rawGet(exportUrl({}), {});
      assert.equal(anonymous.status, 401);
      assert.equal(JSON.parse(anonymous.body.toString("utf8")).errors[0].extensions.code, "UNAUTHENTICATED");
      assert.equal(anonymous.headers["www-authenticate"], "Bearer");
      const bad = await rawGet(exportUrl({}), { authorization: "Bearer nope" });
      assert.equal(bad.status, 401);
      const post = await fetch(exportUrl({}), { method: "POST" });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get("allow"), "GET");
    });

    it("refuses a conversion lacking a rate with UNSUPPORTED_CURRENCY, as GraphQL does", async () => {
      // A day before the demo's first FX rate, stored in EUR (a load refuses a row whose own
      // currency has no rate, issue 57) and asked in GBP, which has no rate on that day.
      const early = addDays(first(), -400);
      await region.load("early.csv", [`early-1,${early},GB,google_ads,search,c-e,Early,10,1,10000,0,0,EUR`]);
      const answer = await exportOf({ from: early, to: addDays(early, 1), currency: "GBP" });
      assert.equal(answer.status, 400);
      const body = JSON.parse(answer.body.toString("utf8"));
      assert.equal(body.errors[0].extensions.code, "UNSUPPORTED_CURRENCY");
      const graphql = await fetch(`${base}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${await token()}`, "content-type": "application/json" },
        body: JSON.stringify({
          query: RECORDS,
          variables: { c: "brand-acme", r: { from: early, to: addDays(early, 1) }, cur: "GBP", p: 1 },
        }),
      });
      const answered = (await graphql.json()) as {
        errors: { message: string; extensions: { code: string } }[];
      };
      assert.equal(answered.errors[0]!.extensions.code, "UNSUPPORTED_CURRENCY");
      assert.equal(body.errors[0].message, answered.errors[0]!.message);
    });

    it("runs at most N exports at once: one more waits its turn, then is refused 429 with Retry-After", async () => {
      const range = { from: bulk.from, to: bulk.to };
      // Hold N exports open by not reading them (paused on their first chunk).
      const gates: (() => void)[] = [];
      const open = Array.from({ length: EXPORT_CONCURRENCY }, async () =>
        rawGet(
          exportUrl(range),
          { authorization: `Bearer ${await token()}` },
          () => new Promise<void>((resolve) => gates.push(resolve)),
        ),
      );
      while (gates.length < EXPORT_CONCURRENCY) await new Promise((resolve) => setTimeout(resolve, 20));
      try {
        const refused = await exportOf();
        assert.equal(refused.status, 429);
        assert.equal(refused.headers["retry-after"], "5");
        assert.equal(JSON.parse(refused.body.toString("utf8")).errors[0].extensions.code, "RATE_LIMITED");
        // GraphQL still answers while every export slot is taken.
        assert.ok((await walk()).rows.length > 0);
      } finally {
        // Held exports are released even when an assertion fails, so their slots and the
        // service's close never wait on them.
        for (const gate of gates) gate();
      }
      for (const answer of await Promise.all(open)) assert.equal(answer.complete, true);
      assert.equal((await exportOf()).status, 200);
    });

    it("takes turns: an export whose client stops reading holds back no other", async () => {
      const range = { from: bulk.from, to: bulk.to };
      let gate: (() => void) | undefined;
      const stalled = rawGet(
        exportUrl(range),
        { authorization: `Bearer ${await token()}` },
        () => new Promise<void>((resolve) => (gate = resolve)),
      );
      while (gate === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
      try {
        // The stalled export held the only lane; this one streams whole all the same.
        const other = await exportOf(range);
        assert.equal(other.status, 200);
        assert.equal(other.complete, true);
        assert.equal(
          other.body.toString("utf8").split("\n").length - 1,
          Number(other.headers["mdq-row-count"]),
        );
      } finally {
        gate?.();
      }
      const resumed = await stalled;
      assert.equal(resumed.complete, true);
      assert.equal(
        resumed.body.toString("utf8").split("\n").length - 1,
        Number(resumed.headers["mdq-row-count"]),
      );
    });

    it("cuts the connection without the final chunk when the store fails mid-stream", async () => {
      const range = { from: bulk.from, to: bulk.to };
      let url = exportUrl(range);
      let fail = () => engine.failExports();
      let faulty: Service | undefined;
      if (engine.name === "duckdb") {
        faulty = await buildService(region.config, {
          store: failingAfterFirstBatch(region.store as Store & RecordExports),
        });
        const faultyBase = (await faulty.app.listen({ host: "127.0.0.1", port: 0 })).replace(
          "localhost",
          "127.0.0.1",
        );
        url = url.replace(base, faultyBase);
        fail = async () => {};
      }
      try {
        const answer = await rawGet(url, { authorization: `Bearer ${await token()}` }, fail);
        assert.equal(answer.status, 200);
        assert.equal(answer.complete, false);
        const rows = Number(answer.headers["mdq-row-count"]);
        assert.ok(answer.body.toString("utf8").split("\n").length - 1 < rows);
        // fetch, as a browser or the SDK reads it, fails too.
        const outcome = await fetch(url, { headers: { authorization: `Bearer ${await token()}` } })
          .then(async (response) => {
            const reader = response.body!.getReader();
            await reader.read();
            await fail();
            for (;;) if ((await reader.read()).done) return "whole";
          })
          .catch(() => "failed");
        assert.equal(outcome, "failed");
      } finally {
        await faulty?.app.close();
      }
      assert.equal((await exportOf()).status, 200);
    });

    it("stops the windows being written, or the read ahead, when the client of an export alone leaves, and leaves nothing behind", async () => {
      const range = { from: bulk.from, to: bulk.to };
      /** Reads `bytes` of the export of `parameters`, then leaves. */
      const leaveAfter = async (parameters: Record<string, string>, bytes: number) => {
        const controller = new AbortController();
        const response = await fetch(exportUrl(parameters), {
          headers: { authorization: `Bearer ${await token()}` },
          signal: controller.signal,
        });
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        for (let read = 0; read < bytes; ) {
          const chunk = await reader.read();
          assert.equal(chunk.done, false);
          read += chunk.value!.length;
        }
        controller.abort();
        await reader.read().catch(() => undefined);
      };
      const reference = await exportOf(range);
      // Past the first window (a batch of the walk, under 1,000 bytes a row), into those the engine writes.
      await leaveAfter(range, FIRST_WINDOW_ROWS * 1000);
      assert.deepEqual(await exportWorkDirsLeft(), []);
      assert.equal(await engine.openTransactions(), 0);
      const again = await exportOf(range);
      assert.equal(again.complete, true);
      assert.ok(again.body.equals(reference.body));
      // Arrow: past its first batches, while its walk's next statement is read ahead.
      const arrow = await exportOf({ ...range, format: "arrow" });
      await leaveAfter({ ...range, format: "arrow" }, Math.floor(arrow.body.length / 3));
      assert.equal(await engine.openTransactions(), 0);
      const arrowAgain = await exportOf({ ...range, format: "arrow" });
      assert.equal(arrowAgain.complete, true);
      assert.ok(arrowAgain.body.equals(arrow.body));
    });

    it("leaves the pool whole after 100 aborted exports", async () => {
      const range = { from: bulk.from, to: bulk.to };
      for (let round = 0; round < Math.ceil(100 / EXPORT_CONCURRENCY); round += 1) {
        await Promise.all(
          Array.from({ length: EXPORT_CONCURRENCY }, async () => {
            const controller = new AbortController();
            let response: Response;
            // A slot comes back once the server has seen the previous round's abort.
            for (;;) {
              response = await fetch(exportUrl(range), {
                headers: { authorization: `Bearer ${await token()}` },
                signal: controller.signal,
              });
              if (response.status !== 429) break;
              await response.arrayBuffer();
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            assert.equal(response.status, 200);
            const reader = response.body!.getReader();
            await reader.read();
            controller.abort();
            await reader.read().catch(() => undefined);
          }),
        );
      }
      // Every slot and connection comes back: N whole exports at once, and GraphQL beside them.
      let answers: RawAnswer[] = [];
      for (let attempt = 0; attempt < 50; attempt += 1) {
        answers = await Promise.all(Array.from({ length: EXPORT_CONCURRENCY }, () => exportOf()));
        if (answers.every((answer) => answer.status === 200)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.equal(answer.complete, true);
      }
      const walked = await walk();
      assert.equal(String(walked.rows.length), answers[0]!.headers["mdq-row-count"]);
      assert.equal(await engine.openTransactions(), 0);
      // Nor do the exports' work directories stay behind (DuckDB's windows are written to files).
      assert.deepEqual(await exportWorkDirsLeft(), []);
    });

    it("leaves no timer behind (node-postgres' read timeout of COPY streams)", async () => {
      const timers = () => process.getActiveResourcesInfo().filter((name) => name === "Timeout").length;
      await exportOf({ format: "arrow" });
      const before = timers();
      const exports = 6;
      for (let round = 0; round < exports; round += 1) {
        const answer = await exportOf({ format: round % 2 === 0 ? "ndjson" : "arrow" });
        assert.equal(answer.complete, true);
      }
      // Each whole export ran one statement or more; a timer left per statement would show here.
      assert.ok(timers() - before < exports, `${timers() - before} more timers after ${exports} exports`);
    });
  });
}
