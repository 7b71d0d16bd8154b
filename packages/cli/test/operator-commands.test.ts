/**
 * The operator commands of `mdq` (docs/cli.md) as processes against a real `mdq serve`: each
 * command's JSON and human output, the exit codes (2 usage, 3 refused, 4 unreachable,
 * 5 unauthorized), the app secret shown once and working at the token endpoint, and the admin
 * token never printed.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { AppView } from "@mdq/server";
import {
  APP_VIEW_KEYS,
  createTestDatabase,
  environment,
  freePort,
  MDQ,
  type MdqResult,
  runMdq,
  type TestDatabase,
} from "@mdq/test-support";

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const RECORDS_HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

/** Everything every `mdq` run printed, to check that the admin token never appears. */
const transcript: string[] = [];

/** Runs `mdq` to completion in `cwd`; resolves with its exit code and output. */
async function mdq(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<MdqResult> {
  const result = await runMdq(args, options.env, options);
  transcript.push(result.stdout, result.stderr);
  return result;
}

/** Runs `mdq … --json`, asserts exit 0, and parses stdout. */
async function mdqJson<T>(args: string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string }): Promise<T> {
  const result = await mdq([...args, "--json"], options);
  assert.equal(result.code, 0, `mdq ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** Runs `mdq` and asserts its exit code; resolves with the result. */
async function mdqFails(
  code: number,
  args: string[],
  options?: { env?: NodeJS.ProcessEnv },
): Promise<MdqResult> {
  const result = await mdq(args, options);
  assert.equal(result.code, code, `mdq ${args.join(" ")}: ${result.stdout}${result.stderr}`);
  assert.equal(result.stdout, "", "a failed command prints nothing on stdout");
  return result;
}

/** An app as `--json` prints it: the admin API's view. */
type App = AppView;

interface Key {
  kid: string;
  alg: string;
  createdAt: string;
  retiredAt: string | null;
  active: boolean;
}

/**
 * The whole suite runs twice: against `mdq serve` on the embedded DuckDB store, and on a fresh
 * PostgreSQL database (`MDQ_DATABASE_URL`, after `mdq migrate`): every operator command works on
 * both engines.
 */
for (const engine of ["duckdb", "postgres"] as const)
  describe(`mdq operator commands against a running mdq serve (${engine})`, () => {
    let database: TestDatabase | undefined;
    let work: string;
    let dataDir: string;
    let port: number;
    let serve: ChildProcess;
    let serveLog = "";
    let data: string[];
    /** The region's day, from `mdq status` at the start. */
    let today: string;

    /** The token endpoint's answer for an app's id and secret (HTTP Basic, CONTRACT §2). */
    async function token(appClientId: string, secret: string): Promise<{ status: number; body: unknown }> {
      const basic = Buffer.from(`${encodeURIComponent(appClientId)}:${encodeURIComponent(secret)}`).toString(
        "base64",
      );
      const response = await fetch(`http://127.0.0.1:${port}/oauth2/token`, {
        method: "POST",
        headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials&scope=api_data%2Fread",
      });
      return { status: response.status, body: await response.json() };
    }

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "mdq-operator-"));
      // `<work>/data/uk` is also the default data directory of a command run in `work`.
      dataDir = join(work, "data", "uk");
      data = ["--data", dataDir];
      port = await freePort();
      const adminPort = await freePort();
      const storeEnv: NodeJS.ProcessEnv = {};
      if (engine === "postgres") {
        database = await createTestDatabase("operator");
        storeEnv["MDQ_DATABASE_URL"] = database.url;
        const migrated = await mdq(["migrate"], { env: storeEnv });
        assert.equal(migrated.code, 0, migrated.stderr);
      }
      serve = spawn(process.execPath, [MDQ, "serve", "--port", String(port), "--data", dataDir], {
        env: environment({ MDQ_ADMIN_PORT: String(adminPort), MDQ_LOG_LEVEL: "warn", ...storeEnv }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      serve.stdout!.on("data", (chunk: Buffer) => {
        serveLog += chunk.toString();
      });
      serve.stderr!.on("data", (chunk: Buffer) => {
        serveLog += chunk.toString();
      });
      const exited = new Promise<never>((_, reject) =>
        serve.once("exit", (code) => reject(new Error(`mdq serve exited with ${code}: ${serveLog}`))),
      );
      const started = Date.now();
      const adminFile = join(dataDir, "admin.json");
      while (!(await readFile(adminFile, "utf8").catch(() => ""))) {
        if (Date.now() - started > 15_000) throw new Error(`no ${adminFile} after 15 s: ${serveLog}`);
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 50))]);
      }
      today = (await mdqJson<{ today: string }>(["status", ...data])).today;
      await writeFile(
        join(work, "acme.csv"),
        [
          RECORDS_HEADER,
          "r-1,2026-03-01,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
          "r-2,2026-03-01,DE,meta_ads,social,c-2,Frühling,2000,40,20,1,50,EUR",
          "r-3,2026-03-02,GB,google_ads,search,c-1,Spring sale,1100,55,13,3,120,GBP",
        ].join("\n"),
      );
    });

    after(async () => {
      if (serve.exitCode === null) {
        serve.kill("SIGTERM");
        await new Promise((resolve) => serve.once("exit", resolve));
      }
      await rm(work, { recursive: true, force: true });
      await database?.drop();
    });

    let globexId: string;

    it("brand create prints the new brand as JSON, with the given id or one derived from the name", async () => {
      const [acme, globex] = await Promise.all([
        mdqJson<{ brand: { brandId: string; name: string; createdAt: string } }>([
          "brand",
          "create",
          "--name",
          "Acme Foods",
          "--id",
          "brand-acme",
          ...data,
        ]),
        mdqJson<{ brand: { brandId: string; name: string } }>([
          "brand",
          "create",
          "--name",
          "Globex",
          ...data,
        ]),
      ]);
      assert.deepEqual(Object.keys(acme).sort(), ["brand"]);
      assert.deepEqual(Object.keys(acme.brand).sort(), ["brandId", "createdAt", "name"]);
      assert.equal(acme.brand.brandId, "brand-acme");
      assert.equal(acme.brand.name, "Acme Foods");
      assert.match(acme.brand.createdAt, ISO_INSTANT);

      assert.equal(globex.brand.brandId, "globex", "derived from the name");
      globexId = globex.brand.brandId;
      assert.equal(globex.brand.name, "Globex");
    });

    it("brand list shows every brand as JSON and as an aligned table", async () => {
      const [{ brands }, human] = await Promise.all([
        mdqJson<{ brands: { brandId: string; name: string }[] }>(["brand", "list", ...data]),
        mdq(["brand", "list", ...data]),
      ]);
      assert.deepEqual(brands.map((brand) => brand.name).sort(), ["Acme Foods", "Globex"]);
      assert.equal(human.code, 0);
      const lines = human.stdout.trimEnd().split("\n");
      assert.equal(lines.length, 3);
      assert.match(lines[0]!, /^BRAND\s+NAME\s+CREATED AT$/);
      const acme = lines.find((line) => line.startsWith("brand-acme "));
      assert.ok(acme, human.stdout);
      assert.match(acme, /^brand-acme\s+Acme Foods\s+\d{4}-\d{2}-\d{2}T/);
      assert.equal(acme.indexOf("Acme Foods"), lines[0]!.indexOf("NAME"), "the name is under its header");
    });

    it("brand create refuses an existing id with exit 3 and the service's message", async () => {
      const result = await mdqFails(3, [
        "brand",
        "create",
        "--name",
        "Acme again",
        "--id",
        "brand-acme",
        ...data,
      ]);
      assert.match(result.stderr, /^mdq: .*\(409 CONFLICT\)\n$/);
    });

    it("grant add, grant remove and grant list answer with the brand's grants", async () => {
      const added = await mdqJson<{ brandId: string; markets: string[]; dataSources: string[] }>([
        "grant",
        "add",
        "--brand",
        "brand-acme",
        "--markets",
        "GB,DE,FR",
        "--data-sources",
        "google_ads,meta_ads",
        ...data,
      ]);
      assert.deepEqual(Object.keys(added).sort(), ["brandId", "dataSources", "markets"]);
      assert.equal(added.brandId, "brand-acme");
      assert.deepEqual([...added.markets].sort(), ["DE", "FR", "GB"]);
      assert.deepEqual([...added.dataSources].sort(), ["google_ads", "meta_ads"]);

      const removed = await mdqJson<{ markets: string[]; dataSources: string[] }>([
        "grant",
        "remove",
        "--brand",
        "brand-acme",
        "--markets",
        "FR",
        ...data,
      ]);
      assert.deepEqual([...removed.markets].sort(), ["DE", "GB"]);
      assert.deepEqual([...removed.dataSources].sort(), ["google_ads", "meta_ads"]);

      const [listed, human] = await Promise.all([
        mdqJson<{ markets: string[]; dataSources: string[] }>([
          "grant",
          "list",
          "--brand",
          "brand-acme",
          ...data,
        ]),
        mdq(["grant", "list", "--brand", "brand-acme", ...data]),
      ]);
      assert.deepEqual(listed, removed);
      assert.equal(human.code, 0);
      assert.match(human.stdout, /^Grants of brand brand-acme:\n {2}markets: +(DE,GB|GB,DE)\n/);
    });

    let analytics: { app: App; appClientSecret: string };
    let dashboardId: string;
    let dashboardSecret: string;

    it("app create prints the secret once, with a warning, and the secret works at the token endpoint", async () => {
      const [created, human] = await Promise.all([
        mdq([
          "app",
          "create",
          "--brand",
          "brand-acme",
          "--name",
          "Acme Analytics",
          "--markets",
          "GB",
          "--json",
          ...data,
        ]),
        mdq(["app", "create", "--brand", "brand-acme", "--name", "Acme Dashboard", ...data]),
      ]);
      assert.equal(created.code, 0, created.stderr);
      analytics = JSON.parse(created.stdout);
      assert.deepEqual(Object.keys(analytics).sort(), ["app", "appClientSecret"]);
      assert.deepEqual(Object.keys(analytics.app).sort(), APP_VIEW_KEYS);
      assert.equal(analytics.app.brandId, "brand-acme");
      assert.deepEqual(analytics.app.markets, ["GB"]);
      assert.equal(analytics.app.dataSources, null);
      assert.equal(analytics.app.revokedAt, null);
      assert.ok(analytics.appClientSecret.length >= 43, "a secret carries at least 256 bits");
      assert.match(created.stderr, /shown only now/);

      const issued = await token(analytics.app.appClientId, analytics.appClientSecret);
      assert.equal(issued.status, 200);
      assert.equal((issued.body as { token_type: string }).token_type, "Bearer");

      assert.equal(human.code, 0, human.stderr);
      dashboardId = /^appClientId: +(\S+)$/m.exec(human.stdout)?.[1] ?? "";
      dashboardSecret = /^appClientSecret: +(\S+)$/m.exec(human.stdout)?.[1] ?? "";
      assert.match(human.stdout, /^Created app \S+ \(Acme Dashboard\) of brand brand-acme\.$/m);
      assert.match(human.stderr, /shown only now/);
      assert.equal((await token(dashboardId, dashboardSecret)).status, 200);
    });

    it("app list shows the brand's apps but never a secret", async () => {
      const [{ apps }, human] = await Promise.all([
        mdqJson<{ apps: App[] }>(["app", "list", "--brand", "brand-acme", ...data]),
        mdq(["app", "list", "--brand", "brand-acme", ...data]),
      ]);
      assert.deepEqual(apps.map((app) => app.name).sort(), ["Acme Analytics", "Acme Dashboard"]);
      assert.deepEqual(
        apps.find((app) => app.appClientId === analytics.app.appClientId),
        analytics.app,
      );
      assert.equal(human.code, 0);
      const row = human.stdout.split("\n").find((line) => line.startsWith(`${analytics.app.appClientId} `));
      assert.match(row ?? "", /\s+brand-acme\s+Acme Analytics\s+GB\s+all granted\s+active\s+-\s+\d{4}-/);

      const listed = JSON.stringify(apps) + human.stdout + human.stderr;
      assert.ok(!listed.includes(analytics.appClientSecret));
      assert.ok(!listed.includes(dashboardSecret));
    });

    it("app create for an unknown brand is refused with exit 3", async () => {
      const result = await mdqFails(3, ["app", "create", "--brand", "no-such-brand", "--name", "X", ...data]);
      assert.match(result.stderr, /\(404 NOT_FOUND\)/);
    });

    it("app rotate-secret --grace 90s gives a new secret and keeps the old one working for 90 s", async () => {
      const before = Date.now();
      const rotated = await mdqJson<{ app: App; appClientSecret: string }>([
        "app",
        "rotate-secret",
        analytics.app.appClientId,
        "--grace",
        "90s",
        ...data,
      ]);
      const afterwards = Date.now();
      assert.notEqual(rotated.appClientSecret, analytics.appClientSecret);
      const expires = Date.parse(rotated.app.previousSecretExpiresAt ?? "");
      assert.ok(
        expires >= before + 89_000 && expires <= afterwards + 91_000,
        rotated.app.previousSecretExpiresAt!,
      );
      assert.equal((await token(analytics.app.appClientId, rotated.appClientSecret)).status, 200);
      assert.equal((await token(analytics.app.appClientId, analytics.appClientSecret)).status, 200);
    });

    it("app revoke stops the app's secret at once, and revoking it again is refused with exit 3", async () => {
      const revoked = await mdqJson<{ app: App }>(["app", "revoke", dashboardId, ...data]);
      assert.equal(revoked.app.appClientId, dashboardId);
      assert.match(revoked.app.revokedAt ?? "", ISO_INSTANT);
      const refused = await token(dashboardId, dashboardSecret);
      assert.equal(refused.status, 400);
      assert.equal((refused.body as { error: string }).error, "invalid_client");

      const again = await mdqFails(3, ["app", "revoke", dashboardId, ...data]);
      assert.match(again.stderr, /\(409 CONFLICT\)/);
    });

    it("fx load reports the rates it loaded", async () => {
      const file = join(work, "fx.csv");
      await writeFile(
        file,
        "date,currency,rate\n2026-03-01,GBP,0.85\n2026-03-01,USD,1.08\n2026-03-02,GBP,0.86\n",
      );
      const fx = await mdqJson<{ rates: number; currencies: unknown; from: string; to: string }>([
        "fx",
        "load",
        file,
        ...data,
      ]);
      assert.equal(fx.rates, 3);
      assert.equal(fx.from, "2026-03-01");
      assert.equal(fx.to, "2026-03-02");

      const human = await mdq(["fx", "load", file, ...data]);
      assert.equal(human.code, 0, human.stderr);
      assert.equal(human.stdout, "Loaded 3 FX rates for 2 currencies (GBP,USD), 2026-03-01 to 2026-03-02.\n");
    });

    it("load replaces the brand's days and reports rows, days and the processing date", async () => {
      const loaded = await mdqJson<{
        loadId: string;
        rows: number;
        days: number;
        from: string;
        to: string;
        processingDate: string;
      }>(["load", join(work, "acme.csv"), "--brand", "brand-acme", ...data]);
      assert.deepEqual(Object.keys(loaded).sort(), [
        "days",
        "from",
        "loadId",
        "processingDate",
        "rows",
        "to",
      ]);
      assert.equal(loaded.rows, 3);
      assert.equal(loaded.days, 2);
      assert.equal(loaded.from, "2026-03-01");
      assert.equal(loaded.to, "2026-03-02");
      assert.equal(loaded.processingDate, today);
    });

    it("load reads other column names with --map, a relative path, and --format", async () => {
      const records = [
        { id: "g-1", day: "2026-03-05", market: "US", data_source: "google_ads", channel: "search" },
        { id: "g-2", day: "2026-03-06", market: "US", data_source: "google_ads", channel: "search" },
      ].map((row) => ({
        ...row,
        campaign_id: "c-9",
        campaign_name: "Launch",
        impressions: 10,
        clicks: 1,
        spend: "1.5",
        conversions: "0",
        revenue: "0",
        currency: "USD",
      }));
      // `.txt`: the format cannot come from the extension, so --format is needed.
      await writeFile(join(work, "globex.txt"), records.map((record) => JSON.stringify(record)).join("\n"));
      const human = await mdq(
        [
          "load",
          "globex.txt",
          "--brand",
          globexId,
          "--format",
          "ndjson",
          "--map",
          "record_id=id",
          "--map",
          "date=day",
          "--date",
          "2026-03-07",
        ],
        { cwd: work, env: { MDQ_DATA_DIR: dataDir } },
      );
      assert.equal(human.code, 0, human.stderr);
      assert.match(
        human.stdout,
        new RegExp(
          `^Loaded 2 rows for brand ${globexId}: 2 days, 2026-03-05 to 2026-03-06\\.\\n` +
            "Processing date 2026-03-07 \\(load \\S+\\)\\.\\n" +
            `Publish it with: mdq publish --brand ${globexId} --date 2026-03-07\\n$`,
        ),
      );
    });

    it("load of a bad file exits 3 and lists its problems as `line N: column: message`", async () => {
      const file = join(work, "bad.csv");
      await writeFile(
        file,
        [
          RECORDS_HEADER,
          "r-1,2026-03-01,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
          "r-2,2026-03-01,UK,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
          "r-3,2026-02-30,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
        ].join("\n"),
      );
      const result = await mdqFails(3, ["load", file, "--brand", "brand-acme", ...data]);
      const lines = result.stderr.trimEnd().split("\n");
      assert.match(lines[0]!, /^mdq: .*\(422 INVALID_FILE\)$/);
      assert.deepEqual(lines.slice(1), [
        'line 3: market: "UK" is not an ISO 3166-1 alpha-2 country code (upper case, e.g. "GB")',
        'line 4: date: "2026-02-30" is not a calendar day written YYYY-MM-DD',
      ]);
      const { brands } = await mdqJson<{ brands: { brandId: string; rows: number }[] }>(["status", ...data]);
      assert.equal(brands.find((brand) => brand.brandId === "brand-acme")!.rows, 3, "nothing was changed");
    });

    it("load refuses a row whose currency has no FX rate on or before its day, naming line, currency and day (exit 3, nothing stored)", async () => {
      const file = join(work, "chf.csv");
      await writeFile(
        file,
        [
          RECORDS_HEADER,
          "r-1,2026-03-01,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
          "r-9,2026-03-01,DE,google_ads,search,c-9,Alpen,1000,50,12.34,2.5,99.99,CHF",
          "r-10,2026-02-28,GB,google_ads,search,c-1,Spring sale,1000,50,12.34,2.5,99.99,GBP",
        ].join("\n"),
      );
      const result = await mdqFails(3, ["load", file, "--brand", "brand-acme", ...data]);
      const lines = result.stderr.trimEnd().split("\n");
      assert.match(
        lines[0]!,
        /^mdq: 2 problem\(s\) in .*chf\.csv; nothing was changed \(422 INVALID_FILE\)$/,
      );
      assert.deepEqual(lines.slice(1), [
        "line 3: currency: no CHF reference rate on or before 2026-03-01 (the region holds no CHF rates): load the rates first (mdq fx load), then this file",
        "line 4: currency: no GBP reference rate on or before 2026-02-28 (GBP rates start on 2026-03-01): load the rates first (mdq fx load), then this file",
      ]);
      const { brands } = await mdqJson<{
        brands: { brandId: string; rows: number; firstDay: string; unreadableDays: unknown[] }[];
      }>(["status", ...data]);
      const acme = brands.find((brand) => brand.brandId === "brand-acme")!;
      assert.deepEqual(
        { rows: acme.rows, firstDay: acme.firstDay, unreadableDays: acme.unreadableDays },
        { rows: 3, firstDay: "2026-03-01", unreadableDays: [] },
        "nothing was changed, and every stored day is readable",
      );
    });

    it("publish marks today's load as published", async () => {
      const published = await mdqJson<{ brandId: string; processingDate: string; publishedAt: string }>([
        "publish",
        "--brand",
        "brand-acme",
        ...data,
      ]);
      assert.deepEqual(Object.keys(published).sort(), ["brandId", "processingDate", "publishedAt"]);
      assert.equal(published.brandId, "brand-acme");
      assert.equal(published.processingDate, today);
      assert.match(published.publishedAt, ISO_INSTANT);
    });

    it("publish of a date with no load is refused with exit 3", async () => {
      const result = await mdqFails(3, ["publish", "--brand", "brand-acme", "--date", "2020-01-01", ...data]);
      assert.match(result.stderr, /\(409 CONFLICT\)/);
    });

    it("status shows each brand's grants, apps, rows, days, last publish and readiness", async () => {
      const [status, human] = await Promise.all([
        mdqJson<{ region: string; today: string; brands: Record<string, unknown>[] }>(["status", ...data]),
        mdq(["status", ...data]),
      ]);
      assert.equal(status.region, "uk");
      const acme = status.brands.find((brand) => brand["brandId"] === "brand-acme")!;
      assert.deepEqual(Object.keys(acme).sort(), [
        "activeApps",
        "apps",
        "brandId",
        "firstDay",
        "grants",
        "lastDay",
        "lastPublishedAt",
        "lastPublishedDate",
        "name",
        "readyToday",
        "rows",
        "unreadableDays",
      ]);
      assert.equal(acme["apps"], 2);
      assert.equal(acme["activeApps"], 1);
      assert.equal(acme["rows"], 3);
      assert.equal(acme["firstDay"], "2026-03-01");
      assert.equal(acme["lastDay"], "2026-03-02");
      assert.equal(acme["lastPublishedDate"], status.today);
      assert.equal(acme["readyToday"], true);
      const grants = acme["grants"] as { markets: string[]; dataSources: string[] };
      assert.deepEqual([...grants.markets].sort(), ["DE", "GB"]);
      assert.equal(human.code, 0);
      const lines = human.stdout.split("\n");
      assert.equal(lines[0], `Region uk, today ${status.today}: 2 brands.`);
      assert.match(
        lines[2]!,
        /^BRAND\s+NAME\s+APPS\s+ROWS\s+FIRST DAY\s+LAST DAY\s+LAST PUBLISHED\s+PUBLISHED AT\s+READY TODAY$/,
      );
      const row = lines.find((line) => line.startsWith("brand-acme "));
      assert.match(
        row ?? "",
        new RegExp(
          `^brand-acme\\s+Acme Foods\\s+1 active / 2\\s+3\\s+2026-03-01\\s+2026-03-02\\s+${status.today}\\s+\\S+Z\\s+yes$`,
        ),
      );
      const globex = lines.find((line) => line.startsWith(`${globexId} `));
      assert.match(
        globex ?? "",
        new RegExp(
          `^${globexId}\\s+Globex\\s+0 active / 0\\s+2\\s+2026-03-05\\s+2026-03-06\\s+-\\s+-\\s+no$`,
        ),
      );
      assert.ok(
        lines.some((line) =>
          /^brand-acme\s+(DE,GB|GB,DE)\s+(google_ads,meta_ads|meta_ads,google_ads)$/.test(line),
        ),
      );
    });

    it("status run in the working directory finds ./data/uk by default", async () => {
      const status = await mdqJson<{ region: string }>(["status"], { cwd: work });
      assert.equal(status.region, "uk");
    });

    it("keys rotate makes a new active key and keys list keeps the old one, retired", async () => {
      const before = await mdqJson<{ keys: Key[] }>(["keys", "list", ...data]);
      const active = before.keys.filter((key) => key.active);
      assert.equal(active.length, 1);
      const { key } = await mdqJson<{ key: Key }>(["keys", "rotate", ...data]);
      assert.equal(key.active, true);
      assert.notEqual(key.kid, active[0]!.kid);
      const [afterwards, human] = await Promise.all([
        mdqJson<{ keys: Key[] }>(["keys", "list", ...data]),
        mdq(["keys", "list", ...data]),
      ]);
      assert.deepEqual(
        afterwards.keys.filter((listed) => listed.active).map((listed) => listed.kid),
        [key.kid],
      );
      assert.equal(afterwards.keys.find((listed) => listed.kid === active[0]!.kid)?.active, false);
      const lines = human.stdout.trimEnd().split("\n");
      assert.match(lines[0]!, /^KID\s+ALG\s+STATUS\s+CREATED AT\s+RETIRED AT$/);
      assert.match(lines[1]!, new RegExp(`^${key.kid}\\s+${key.alg}\\s+active\\s`));
    });

    it("exits 2 on a bad date, a bad market code, a bad duration or an unknown option", async () => {
      const [date, market, duration, option] = await Promise.all([
        mdqFails(2, ["publish", "--brand", "brand-acme", "--date", "2026-02-30", ...data]),
        mdqFails(2, ["grant", "add", "--brand", "brand-acme", "--markets", "GB,de", ...data]),
        mdqFails(2, ["app", "rotate-secret", analytics.app.appClientId, "--grace", "1w", ...data]),
        mdqFails(2, ["brand", "list", "--no-such-flag", ...data]),
      ]);
      assert.match(date.stderr, /'--date <processingDate>' argument '2026-02-30' is invalid/);
      assert.match(market.stderr, /"de" is not a market code/);
      assert.match(duration.stderr, /'--grace <duration>' argument '1w' is invalid/);
      assert.match(option.stderr, /unknown option '--no-such-flag'/);
    });

    it("exits 4 when no service runs for the data directory", async () => {
      const empty = join(work, "empty");
      await mkdir(empty);
      const stale = join(work, "stale");
      await mkdir(stale);
      await writeFile(
        join(stale, "admin.json"),
        JSON.stringify({ url: `http://127.0.0.1:${await freePort()}` }),
      );
      await writeFile(join(stale, "admin-token"), "a-token-of-a-stopped-service\n");
      const [none, stopped] = await Promise.all([
        mdqFails(4, ["brand", "list", "--data", empty]),
        mdqFails(4, ["status", "--data", stale]),
      ]);
      assert.equal(
        none.stderr,
        `mdq: no ${join(empty, "admin.json")}: is \`mdq serve\` running for this data directory?\n`,
      );
      assert.match(stopped.stderr, /cannot reach the admin API .*ECONNREFUSED.* is `mdq serve` running/);
    });

    it("exits 5 when MDQ_ADMIN_TOKEN is not the service's token, without printing it", async () => {
      const result = await mdqFails(5, ["brand", "list", ...data], {
        env: { MDQ_ADMIN_TOKEN: "not-the-admin-token-0123456789abcdef" },
      });
      assert.match(
        result.stderr,
        /^mdq: the admin token from MDQ_ADMIN_TOKEN was refused \(401 UNAUTHORIZED\)/,
      );
      assert.ok(!result.stderr.includes("not-the-admin-token-0123456789abcdef"));
    });

    it("walks the operator journey: brand → app → grants → fx → load → publish → reads → rotate → revoke → 401", async () => {
      const brand = "journey";
      await mdqJson(["brand", "create", "--name", "Journey", "--id", brand, ...data]);
      const created = await mdqJson<{ app: { appClientId: string }; appClientSecret: string }>([
        "app",
        "create",
        "--brand",
        brand,
        "--name",
        "sync",
        ...data,
      ]);
      await mdqJson([
        "grant",
        "add",
        "--brand",
        brand,
        "--markets",
        "GB",
        "--data-sources",
        "google_ads",
        ...data,
      ]);
      await writeFile(join(work, "journey-fx.csv"), "Date,USD,GBP,\n2025-02-28,1.0800,0.8500,\n");
      await mdqJson(["fx", "load", join(work, "journey-fx.csv"), ...data]);
      await writeFile(
        join(work, "journey.csv"),
        [
          RECORDS_HEADER,
          "j-1,2025-03-01,GB,google_ads,search,c-1,Granted,1000,50,8.50,2,17.00,GBP",
          "j-2,2025-03-01,DE,google_ads,search,c-2,Market not granted,2000,40,20,1,50,EUR",
          "j-3,2025-03-03,GB,meta_ads,social,c-3,Source not granted,1100,55,13,3,120,GBP",
          "j-4,2025-03-03,GB,google_ads,search,c-1,Granted,1200,60,10.00,3,30.00,EUR",
        ].join("\n"),
      );
      await mdqJson(["load", join(work, "journey.csv"), "--brand", brand, ...data]);
      await mdqJson(["publish", "--brand", brand, ...data]);

      const issued = await token(created.app.appClientId, created.appClientSecret);
      assert.equal(issued.status, 200);
      const accessToken = (issued.body as { access_token: string }).access_token;
      const graphql = async (query: string, bearer = accessToken) => {
        const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: "POST",
          headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
          body: JSON.stringify({ query }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { data?: Record<string, unknown> },
        };
      };
      const readiness = await graphql(
        `{ marketingDataReadiness(clientId: "${brand}") { status availableThrough } }`,
      );
      assert.deepEqual(readiness.body.data, {
        marketingDataReadiness: { status: "READY", availableThrough: "2025-03-03" },
      });
      const records = await graphql(`{ marketingRecords(clientId: "${brand}", currency: GBP,
      dateRange: {from: "2025-03-01", to: "2025-03-03"}, sort: [{field: DATE_DAY, direction: ASC}]) {
      recordId date market dataSource impressions spend revenue currency } }`);
      // Exactly the granted rows (GB × google_ads); j-4's EUR 10.00 on Monday at Friday's 0.85 is GBP 8.50.
      assert.deepEqual(records.body.data, {
        marketingRecords: [
          {
            recordId: "j-1",
            date: "2025-03-01",
            market: "GB",
            dataSource: "google_ads",
            impressions: 1000,
            spend: 8.5,
            revenue: 17,
            currency: "GBP",
          },
          {
            recordId: "j-4",
            date: "2025-03-03",
            market: "GB",
            dataSource: "google_ads",
            impressions: 1200,
            spend: 8.5,
            revenue: 25.5,
            currency: "GBP",
          },
        ],
      });

      const rotated = await mdqJson<{ appClientSecret: string }>([
        "app",
        "rotate-secret",
        created.app.appClientId,
        "--grace",
        "0",
        ...data,
      ]);
      assert.equal(
        (await token(created.app.appClientId, created.appClientSecret)).status,
        400,
        "old secret refused",
      );
      assert.equal(
        (await token(created.app.appClientId, rotated.appClientSecret)).status,
        200,
        "new secret works",
      );
      assert.equal(
        (await graphql(`{ marketingDataReadiness(clientId: "${brand}") { status } }`)).status,
        200,
      );

      await mdqJson(["app", "revoke", created.app.appClientId, ...data]);
      const refused = await graphql(`{ marketingDataReadiness(clientId: "${brand}") { status } }`);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, {
        errors: [
          { message: "the access token's app has been revoked", extensions: { code: "UNAUTHENTICATED" } },
        ],
      });
    });

    it("never prints the admin token", async () => {
      const adminToken = (await readFile(join(dataDir, "admin-token"), "utf8")).trim();
      assert.ok(adminToken.length >= 32);
      assert.ok(transcript.length > 40);
      for (const output of transcript) assert.ok(!output.includes(adminToken));
      assert.ok(!serveLog.includes(adminToken));
    });
  });
