/**
 * The bounded load path (issue 19) on both stores, through a real `mdq serve` and its admin API:
 * a file uploaded as a stream, a load answered as it goes (progress lines, then the result), a bad
 * line far past DuckDB's first batch named exactly and changing nothing, `--replace sources`, and
 * `kill -9` while the final transaction replaces the rows: the previous data stays, and the next
 * load works.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  connectTo,
  type DatabaseAndDir,
  type ServeProcess,
  startServe,
  useDatabaseAndDir,
} from "@mdq/test-support";
import { migrateDatabase } from "../src/index.js";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
const BRAND = "brand-stream";
/** Rows of the large file: past DuckDB's first row groups (122,880 rows) and vectors (2,048). */
const LARGE_ROWS = 300_000;
/** The line of the large file's bad value (the header is line 1). */
const BAD_LINE = 250_001;
const DAYS = 30;
const day = (index: number) => `2025-03-${String(1 + (index % DAYS)).padStart(2, "0")}`;

/** A CSV file of `rows` records; `tag` goes into every campaign name; `edit` may change a line. */
async function recordsFile(
  dir: string,
  name: string,
  rows: number,
  options: {
    tag?: string;
    source?: (index: number) => string;
    edit?: (line: number, text: string) => string;
  } = {},
): Promise<string> {
  const lines = [HEADER];
  for (let index = 0; index < rows; index += 1) {
    const source = options.source?.(index) ?? (index % 2 === 0 ? "google_ads" : "meta_ads");
    const text = [
      `${name}-${index}`,
      day(index),
      ["GB", "DE", "FR", "US"][index % 4],
      source,
      "search",
      `c-${index}`,
      `${options.tag ?? name} ${index % 100}`,
      index % 1000,
      index % 10,
      `${index % 500}.25`,
      "1",
      "2.5",
      "EUR",
    ].join(",");
    lines.push(options.edit ? options.edit(lines.length + 1, text) : text);
  }
  const path = join(dir, `${name}.csv`);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

/** The admin token of a served data directory. */
const tokenOf = async (server: ServeProcess) =>
  (await readFile(join(server.dataDir, "admin-token"), "utf8")).trim();

interface LoadLines {
  progress: { phase: string; bytesRead: number; totalBytes: number; rows: number | null }[];
  result?: { rows: number; days: number };
  status?: number;
  error?: { code: string; message: string; details?: { line: number; column?: string; message: string }[] };
}

/**
 * Uploads `path` to `POST /admin/loads/upload` as a stream and reads the streamed answer line by
 * line; `onLine` sees each parsed line as it arrives.
 */
async function upload(
  server: ServeProcess,
  path: string,
  query: Record<string, string>,
  onLine: (line: Record<string, unknown>) => void = () => undefined,
): Promise<LoadLines> {
  const search = new URLSearchParams({ brandId: BRAND, name: path.replace(/^.*\//, ""), ...query });
  const response = await fetch(`http://127.0.0.1:${server.adminPort}/admin/loads/upload?${search}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await tokenOf(server)}`,
      "content-type": "application/octet-stream",
      accept: "application/x-ndjson",
    },
    body: await readFile(path),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/x-ndjson");
  const answer: LoadLines = { progress: [] };
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end = pending.indexOf("\n");
    while (end !== -1) {
      const line = JSON.parse(pending.slice(0, end)) as Record<string, unknown>;
      pending = pending.slice(end + 1);
      onLine(line);
      if (line["progress"]) answer.progress.push(line["progress"] as LoadLines["progress"][number]);
      else Object.assign(answer, line);
      end = pending.indexOf("\n");
    }
  }
  return answer;
}

async function admin(server: ServeProcess, method: string, path: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${server.adminPort}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${await tokenOf(server)}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function storedRows(server: ServeProcess): Promise<number> {
  const status = await admin(server, "GET", "/admin/status");
  const brands = status.body["brands"] as { brandId: string; rows: number }[];
  return brands.find((brand) => brand.brandId === BRAND)!.rows;
}

for (const engine of ["duckdb", "postgres"] as const) {
  describe(`bounded loads on ${engine}`, { concurrency: false }, () => {
    const workspace: DatabaseAndDir = useDatabaseAndDir("load_stream");
    let server: ServeProcess;
    let env: NodeJS.ProcessEnv;
    let large: string;

    before(async () => {
      env = engine === "postgres" ? { MDQ_DATABASE_URL: workspace.database.url } : {};
      if (engine === "postgres") await migrateDatabase(workspace.database.url);
      server = await startServe(join(workspace.dir, "data"), env);
      assert.equal(
        (await admin(server, "POST", "/admin/brands", { brandId: BRAND, name: "Stream" })).status,
        201,
      );
      large = await recordsFile(workspace.dir, "large", LARGE_ROWS);
    });
    after(() => server?.stop("SIGKILL"));

    it("loads an uploaded file, reporting progress as it goes", async () => {
      const answer = await upload(server, large, { processingDate: "2025-04-01" });
      assert.equal(answer.error, undefined, JSON.stringify(answer.error));
      assert.equal(answer.result?.rows, LARGE_ROWS);
      assert.equal(answer.result?.days, DAYS);
      const phases = [...new Set(answer.progress.map((progress) => progress.phase))];
      // DuckDB reads the file straight into the load's own transaction; PostgreSQL is handed a
      // CSV file to COPY (load/records-load.ts).
      const written = engine === "duckdb" ? [] : ["writing"];
      assert.deepEqual(phases, ["reading", "checking", ...written, "replacing"]);
      const last = answer.progress.at(-1)!;
      assert.equal(last.rows, LARGE_ROWS);
      assert.equal(last.bytesRead, last.totalBytes);
      assert.ok(last.totalBytes > 10_000_000);
      assert.equal(await storedRows(server), LARGE_ROWS);
    });

    it("names a bad line far past the first batch, exactly, and changes nothing", async () => {
      const before = await admin(server, "GET", "/admin/status");
      const bad = await recordsFile(workspace.dir, "bad", LARGE_ROWS, {
        tag: "bad",
        edit: (line, text) => (line === BAD_LINE ? text.split(",").with(2, "UK").join(",") : text),
      });
      const answer = await upload(server, bad, {});
      assert.equal(answer.status, 422, JSON.stringify({ ...answer, progress: answer.progress.length }));
      assert.equal(answer.error?.code, "INVALID_FILE");
      assert.deepEqual(answer.error?.details, [
        {
          line: BAD_LINE,
          position: "line",
          column: "market",
          message: '"UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        },
      ]);
      assert.deepEqual(await admin(server, "GET", "/admin/status"), before);
    });

    it("with --replace sources, replaces only the (day, data source) pairs of the file", async () => {
      const metaOnly = await recordsFile(workspace.dir, "meta", 3_000, { source: () => "meta_ads" });
      const answer = await upload(server, metaOnly, { replace: "sources" });
      assert.equal(answer.result?.rows, 3_000);
      // The google_ads half of the large load stays; its meta_ads half is replaced by 3,000 rows.
      assert.equal(await storedRows(server), LARGE_ROWS / 2 + 3_000);
    });

    it("kill -9 while the final transaction replaces the rows leaves the previous data, and the next load works", async () => {
      const previous = await storedRows(server);
      const replacement = await recordsFile(workspace.dir, "replacement", LARGE_ROWS, { tag: "replacement" });
      let killed = false;
      const watcher = engine === "postgres" ? await connectTo(workspace.database.name) : undefined;
      try {
        await upload(server, replacement, {}, (line) => {
          const progress = line["progress"] as { phase: string } | undefined;
          if (progress?.phase !== "replacing" || killed) return;
          killed = true;
          void (async () => {
            if (watcher) {
              // PostgreSQL: wait until the service's session is inside the replace's statements.
              for (let attempt = 0; attempt < 400; attempt += 1) {
                const { rows } = await watcher.query(
                  `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
                    AND (query LIKE 'DELETE FROM records%' OR query LIKE 'INSERT INTO records%')`,
                );
                if (rows.length > 0) break;
                await new Promise((resolve) => setTimeout(resolve, 5));
              }
            }
            server.process.kill("SIGKILL");
          })();
        }).catch(() => undefined);
      } finally {
        await watcher?.end();
      }
      assert.ok(killed, "the load never reached its final transaction");
      await server.stop("SIGKILL");
      server = await startServe(server.dataDir, env);
      assert.equal(await storedRows(server), previous);
      const answer = await upload(server, replacement, {});
      assert.equal(answer.result?.rows, LARGE_ROWS);
      assert.equal(await storedRows(server), LARGE_ROWS);
    });
  });
}
