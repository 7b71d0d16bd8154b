/**
 * A load is all or nothing even when the process dies, and readers never see half of one
 * (CONTRACT §4, docs/admin-api.md "Loads"): `kill -9` of `mdq serve` in the middle of a large
 * load leaves the previous data intact, and readers walking pages during a load see, page by
 * page, either the old data or the new, with `pageInfo.dataVersion` telling them which.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { addDays, MDQ, startTestRegion, type TestRegion } from "@mdq/test-support";
import { DUCKDB_FILE } from "../src/store/duckdb/duckdb-store.js";

const HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";
const GRANTS = { markets: ["DE", "FR", "GB", "US"], dataSources: ["google_ads", "meta_ads"] };
const FINGERPRINT = `query Fingerprint($c: ID!, $r: DateRangeInput!) {
  records: marketingRecords(clientId: $c, dateRange: $r, pagination: {pageSize: 1000}) { recordId }
  totals: marketingAggregate(clientId: $c, dateRange: $r, metrics: [IMPRESSIONS], groupBy: []) {
    TOTAL_IMPRESSIONS
  }
}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** One `mdq serve` child process on a data directory, driven over real HTTP. */
class ServeProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
    readonly adminUrl: string,
    private readonly adminToken: string,
    readonly output: string[],
  ) {}

  static async start(dataDir: string, port: number, adminPort: number): Promise<ServeProcess> {
    const child = spawn(process.execPath, [MDQ, "serve", "--port", String(port), "--data", dataDir], {
      env: { ...process.env, MDQ_ADMIN_PORT: String(adminPort), MDQ_LOG_LEVEL: "warn", MDQ_REGION: "uk" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    for (let attempt = 0; attempt < 300; attempt += 1) {
      if (child.exitCode !== null) throw new Error(`mdq serve exited: ${output.join("")}`);
      try {
        const address = JSON.parse(await readFile(join(dataDir, "admin.json"), "utf8")) as { pid: number };
        if (address.pid === child.pid) {
          const token = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
          const server = new ServeProcess(child, `http://127.0.0.1:${port}`, adminUrl, token, output);
          if ((await fetch(`${server.baseUrl}/readyz`)).ok) return server;
        }
      } catch {
        // not up yet
      }
      await sleep(50);
    }
    child.kill("SIGKILL");
    throw new Error(`mdq serve did not start within 15 s: ${output.join("")}`);
  }

  async admin(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.adminToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  }

  /** An admin call that must succeed; returns the body. */
  async expect<Body>(method: "GET" | "POST", path: string, body: unknown, status: number): Promise<Body> {
    const response = await this.admin(method, path, body);
    assert.equal(response.status, status, JSON.stringify(response.body));
    return response.body as Body;
  }

  async token(appClientId: string, secret: string): Promise<string> {
    const response = await fetch(`${this.baseUrl}/oauth2/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${appClientId}:${secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials&scope=api_data%2Fread",
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  async graphql(token: string, query: string, variables: Record<string, unknown>) {
    const response = await fetch(`${this.baseUrl}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** `kill -9`: no drain, no close, no checkpoint. */
  async kill9(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, "exit");
    this.child.kill("SIGKILL");
    await exited;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, "exit");
    this.child.kill("SIGTERM");
    await exited;
  }
}

/** A CSV line of a record whose values follow from its key and `n`. */
function csvLine(date: string, market: string, source: string, campaign: string, name: string, n: number) {
  return [
    `${date}-${market}-${source}-${campaign}`,
    date,
    market,
    source,
    source === "meta_ads" ? "social" : "search",
    campaign,
    name,
    n,
    n % 97,
    `${n % 1000}.25`,
    "1",
    `${n % 5000}.5`,
    "EUR",
  ].join(",");
}

describe("load durability", { concurrency: false }, () => {
  describe("kill -9 during a large load", () => {
    const BIG_ROWS = 1_000_000;
    const DAYS = 60;
    const range = { from: "2026-01-01", to: addDays("2026-01-01", DAYS - 1) };
    let work: string;
    let dataDir: string;
    let ports: [number, number];
    let server: ServeProcess;
    let app: { appClientId: string; secret: string };
    let bigFile: string;
    let bigFingerprint: { count: number; impressions: number };
    const smallRows: string[] = [];

    async function fingerprint(): Promise<{ count: number; impressions: number }> {
      const token = await server.token(app.appClientId, app.secret);
      const response = await server.graphql(token, FINGERPRINT, { c: "brand-durable", r: range });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const data = response.body["data"] as { totals: { TOTAL_IMPRESSIONS: number }[] };
      const pageInfo = (response.body["extensions"] as { pageInfo: { records: { totalCount: number } } })
        .pageInfo;
      return { count: pageInfo.records.totalCount, impressions: data.totals[0]?.TOTAL_IMPRESSIONS ?? 0 };
    }

    async function storedRows(): Promise<number> {
      const status = await server.expect<{ brands: { brandId: string; rows: number }[] }>(
        "GET",
        "/admin/status",
        undefined,
        200,
      );
      return status.brands.find((brand) => brand.brandId === "brand-durable")!.rows;
    }

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "mdq-durability-"));
      dataDir = join(work, "data");
      ports = [await freePort(), await freePort()];
      server = await ServeProcess.start(dataDir, ...ports);
      await server.expect("POST", "/admin/brands", { brandId: "brand-durable", name: "Durable" }, 201);
      await server.expect("POST", "/admin/grants", { brandId: "brand-durable", ...GRANTS }, 200);
      const created = await server.expect<{ app: { appClientId: string }; appClientSecret: string }>(
        "POST",
        "/admin/apps",
        { brandId: "brand-durable", name: "reader" },
        201,
      );
      app = { appClientId: created.app.appClientId, secret: created.appClientSecret };

      // The data the kills must not disturb: 10 rows on each of the same 60 days.
      for (let day = 0; day < DAYS; day += 1)
        for (let index = 0; index < 10; index += 1)
          smallRows.push(
            csvLine(addDays(range.from, day), "GB", "google_ads", `small-${index}`, "Small", 100 + index),
          );
      const small = join(work, "small.csv");
      await writeFile(small, `${[HEADER, ...smallRows].join("\n")}\n`);
      await server.expect("POST", "/admin/loads", { brandId: "brand-durable", path: small }, 200);

      // The large file: one million rows over the same days, written by DuckDB.
      bigFile = join(work, "big.csv");
      const instance = await DuckDBInstance.create(":memory:");
      const connection = await instance.connect();
      const rows = `SELECT i, DATE '${range.from}' + CAST(i % ${DAYS} AS INTEGER) AS date, i // ${DAYS} AS k
        FROM range(${BIG_ROWS}) t(i)`;
      await connection.run(`COPY (
          SELECT 'big-' || i AS record_id, date,
            ['DE','FR','GB','US'][1 + k % 4] AS market, ['google_ads','meta_ads'][1 + (k // 4) % 2] AS data_source,
            'search' AS channel, 'c-' || (k // 8) AS campaign_id, 'Big campaign ' || (k % 500) AS campaign_name,
            CAST(i % 5000 AS INTEGER) AS impressions, CAST(i % 50 AS INTEGER) AS clicks,
            CAST((i % 100000) / 100 AS DECIMAL(18, 2)) AS spend, '0' AS conversions, '1.5' AS revenue,
            'EUR' AS currency
          FROM (${rows})) TO '${bigFile}' (HEADER)`);
      const [sums] = (
        await connection.runAndReadAll(`SELECT count(*) AS n, sum(i % 5000) AS impressions FROM (${rows})`)
      ).getRowObjectsJS();
      bigFingerprint = { count: Number(sums!["n"]), impressions: Number(sums!["impressions"]) };
      connection.closeSync();
      instance.closeSync();
    });

    after(async () => {
      await server?.stop();
      await rm(work, { recursive: true, force: true });
    });

    /**
     * Starts the big load, waits until `underWay`, kills the server with SIGKILL and restarts it.
     * Returns where the load was when it died (server CPU seconds and database file growth).
     */
    async function killDuringLoad(
      underWay: (progress: { cpu: number; dbBytes: number }) => boolean,
    ): Promise<string> {
      const pid = server.child.pid!;
      const database = join(dataDir, DUCKDB_FILE);
      const startCpu = await cpuSeconds(pid);
      const startDbBytes = await sizeOf(database);
      const started = Date.now();
      let answered: number | undefined;
      const pending = server
        .admin("POST", "/admin/loads", { brandId: "brand-durable", path: bigFile })
        .then((response) => {
          answered = response.status;
        })
        .catch(() => undefined);
      let progress = { cpu: 0, dbBytes: 0 };
      while (answered === undefined && Date.now() < started + 60_000 && !underWay(progress)) {
        await sleep(10);
        progress = {
          cpu: (await cpuSeconds(pid)) - startCpu,
          dbBytes: (await sizeOf(database)) - startDbBytes,
        };
      }
      assert.equal(answered, undefined, "the load finished before the kill: nothing was tested");
      await server.kill9();
      await pending;
      assert.equal(answered, undefined, "the killed load was answered");
      server = await ServeProcess.start(dataDir, ...ports);
      return `killed after ${Date.now() - started} ms, ${progress.cpu.toFixed(2)} s CPU, database file +${progress.dbBytes} bytes`;
    }

    it("leaves the previous data intact when killed while the file is read and checked", async (t) => {
      const before = await fingerprint();
      assert.deepEqual(before, {
        count: smallRows.length,
        impressions: 60 * (100 + 101 + 102 + 103 + 104 + 105 + 106 + 107 + 108 + 109),
      });
      t.diagnostic(await killDuringLoad(({ cpu, dbBytes }) => cpu >= 1.0 && dbBytes === 0));
      assert.deepEqual(await fingerprint(), before);
      assert.equal(await storedRows(), smallRows.length);
    });

    it("leaves the previous data intact when killed while the load's transaction writes the records", async (t) => {
      const before = await fingerprint();
      // DuckDB writes a large insert's row groups into the database file before the commit: the
      // file growing is the transaction under way, with the old rows already deleted inside it.
      t.diagnostic(await killDuringLoad(({ dbBytes }) => dbBytes > 1_000_000));
      assert.deepEqual(await fingerprint(), before);
      assert.equal(await storedRows(), smallRows.length);
    });

    it("completes the same load after the restarts, which replaces the data (so the kills interrupted a real change)", async () => {
      const loaded = await server.expect<Record<string, unknown>>(
        "POST",
        "/admin/loads",
        { brandId: "brand-durable", path: bigFile, processingDate: "2026-03-02" },
        200,
      );
      assert.deepEqual(
        { ...loaded, loadId: "" },
        {
          loadId: "",
          rows: BIG_ROWS,
          days: DAYS,
          from: range.from,
          to: range.to,
          processingDate: "2026-03-02",
        },
      );
      assert.deepEqual(await fingerprint(), bigFingerprint);
      assert.equal(await storedRows(), BIG_ROWS);
      assert.notDeepEqual(bigFingerprint, { count: smallRows.length });
    });
  });

  describe("readers during a load", () => {
    let region: TestRegion;
    let work: string;
    let token: string;
    const BRAND = "brand-readers";
    const DAYS = 30;
    const range = { from: "2020-06-01", to: addDays("2020-06-01", DAYS - 1) };
    const PAGE = `query Page($c: ID!, $r: DateRangeInput!, $p: Int!) {
      marketingRecords(clientId: $c, dateRange: $r, pagination: {page: $p, pageSize: 1000}) { recordId campaignName }
    }`;

    function admin(url: string, body: unknown) {
      return region.service.adminApp.inject({
        method: "POST",
        url,
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        payload: JSON.stringify(body),
      });
    }
    let adminToken: string;

    /** A file of `rows` records over the range, every one named `version`. */
    async function versionFile(version: string, rows: number): Promise<string> {
      const lines = [HEADER];
      const perDay = Math.ceil(rows / DAYS);
      for (let index = 0; index < rows; index += 1) {
        const market = GRANTS.markets[index % 4]!;
        const source = GRANTS.dataSources[Math.floor(index / 4) % 2]!;
        const date = addDays(range.from, Math.floor(index / perDay));
        lines.push(csvLine(date, market, source, `c-${index}`, version, index));
      }
      const path = join(work, `${version}-${rows}.csv`);
      await writeFile(path, `${lines.join("\n")}\n`);
      return path;
    }

    interface Page {
      page: number;
      versions: Set<string>;
      rows: number;
      totalCount: number;
      hasNextPage: boolean;
      dataVersion: string;
    }

    async function readPage(page: number): Promise<Page> {
      const response = await region.graphql(PAGE, { c: BRAND, r: range, p: page }, token);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const rows = response.body.data?.["marketingRecords"] as { campaignName: string }[];
      const info = response.body.extensions!.pageInfo!["marketingRecords"]!;
      return {
        page,
        versions: new Set(rows.map((row) => row.campaignName)),
        rows: rows.length,
        totalCount: info.totalCount,
        hasNextPage: info.hasNextPage,
        dataVersion: info.dataVersion,
      };
    }

    /** Walks every page as a client would, following each page's own `hasNextPage`. */
    async function walk(): Promise<Page[]> {
      const pages = [await readPage(1)];
      while (pages.at(-1)!.hasNextPage) pages.push(await readPage(pages.length + 1));
      return pages;
    }

    before(async () => {
      region = await startTestRegion({ days: 1 });
      adminToken = (await readFile(join(region.dataDir, "admin-token"), "utf8")).trim();
      work = await mkdtemp(join(tmpdir(), "mdq-readers-"));
      assert.equal((await admin("/admin/brands", { brandId: BRAND, name: "Readers" })).statusCode, 201);
      assert.equal((await admin("/admin/grants", { brandId: BRAND, ...GRANTS })).statusCode, 200);
      const created = (await admin("/admin/apps", { brandId: BRAND, name: "walker" })).json();
      token = await region.token(created.app.appClientId, created.appClientSecret);
    });
    after(async () => {
      await region.close();
      await rm(work, { recursive: true, force: true });
    });

    it("every page is wholly the old or the new data, and a page of the other version carries another dataVersion", async (t) => {
      let overlapped = false;
      const report: string[] = [];
      for (let attempt = 0; attempt < 5 && !overlapped; attempt += 1) {
        const counts = { A: 20_000 * 2 ** attempt, B: 20_000 * 2 ** attempt + 3_500 };
        const fileA = await versionFile("A", counts.A);
        const fileB = await versionFile("B", counts.B);
        assert.equal((await admin("/admin/loads", { brandId: BRAND, path: fileA })).statusCode, 200);
        const settled = await walk();
        assert.deepEqual(
          [...new Set(settled.flatMap((page) => [...page.versions]))],
          ["A"],
          "version A is loaded before the test starts",
        );

        let loadDone = false;
        const loading = admin("/admin/loads", { brandId: BRAND, path: fileB }).finally(() => {
          loadDone = true;
        });
        const walks: Page[][] = [];
        while (!loadDone) walks.push(await walk());
        assert.equal((await loading).statusCode, 200);
        walks.push(await walk());

        const versionOf = new Map<string, string>();
        for (const pages of walks) {
          for (const page of pages) {
            assert.equal(page.versions.size, 1, `page ${page.page} mixes versions ${[...page.versions]}`);
            const version = [...page.versions][0] as "A" | "B";
            assert.equal(page.totalCount, counts[version], `page ${page.page} of ${version}`);
            assert.equal(page.rows, Math.min(1000, counts[version] - (page.page - 1) * 1000));
            assert.equal(versionOf.get(page.dataVersion) ?? version, version, "one dataVersion, one version");
            versionOf.set(page.dataVersion, version);
          }
          for (let index = 1; index < pages.length; index += 1) {
            const [previous, next] = [pages[index - 1]!, pages[index]!];
            if ([...previous.versions][0] !== [...next.versions][0]) {
              assert.notEqual(
                next.dataVersion,
                previous.dataVersion,
                "a changed version changes dataVersion",
              );
            }
          }
          if (new Set(pages.map((page) => [...page.versions][0])).size === 2) overlapped = true;
        }
        const last = walks.at(-1)!;
        assert.deepEqual(
          [...new Set(last.flatMap((page) => [...page.versions]))],
          ["B"],
          "after the load every page is B",
        );
        assert.equal(last.length, Math.ceil(counts.B / 1000));
        report.push(`${counts.A}→${counts.B} rows: ${walks.length} walks, overlap ${overlapped}`);
      }
      t.diagnostic(report.join("; "));
      assert.ok(overlapped, `no walk overlapped a load's commit: ${report.join("; ")}`);
    });
  });
});
