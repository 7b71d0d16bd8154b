/**
 * `mdq-client sync` and `mirror` through the bulk export (issue 18) against a real `mdq serve`, on
 * DuckDB and on PostgreSQL: one export per window and no page walk, files byte-identical to the
 * page walk's (`--page-walk`, the path of a service without the export), and a load that lands
 * while a window downloads handled as the walk handles it: the window is read again whole from the
 * new version, and the file equals a fresh sync's.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { EXPORT_PATH } from "@mdq/contract";
import {
  assertSameMirrorFiles,
  type CliRun,
  createTestDatabase,
  daysAgo,
  type FaultProxy,
  runCli,
  runMdq,
  type ServeProcess,
  startFaultProxy,
  startServe,
  type TestDatabase,
} from "@mdq/test-support";

const DAYS = 30;
const LOAD_HEADER =
  "record_id,date,market,data_source,channel,campaign_id,campaign_name,impressions,clicks,spend,conversions,revenue,currency";

for (const store of ["DuckDB", "PostgreSQL"] as const) {
  describe(`sync and mirror through the export (${store})`, () => {
    let work: string;
    let database: TestDatabase | undefined;
    let storeEnv: NodeJS.ProcessEnv;
    let serve: ServeProcess;
    let proxy: FaultProxy;
    let env: NodeJS.ProcessEnv;
    const from = daysAgo(DAYS);
    const to = daysAgo(1);

    /** Runs `mdq-client args` through the proxy; returns the run and how many exports and records pages it asked. */
    async function client(args: string[]): Promise<{ run: CliRun; exports: number; pages: number }> {
      const exportsBefore = proxy.count(EXPORT_PATH);
      const pagesBefore = recordPages();
      const run = await runCli(args, env);
      assert.equal(run.code, 0, run.stderr);
      return { run, exports: proxy.count(EXPORT_PATH) - exportsBefore, pages: recordPages() - pagesBefore };
    }

    function recordPages(): number {
      return proxy.seen.filter((seen) => seen.body?.query?.includes("marketingRecords(") === true).length;
    }

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "mdq-sync-export-"));
      database = store === "PostgreSQL" ? await createTestDatabase("sync_export") : undefined;
      storeEnv = database ? { MDQ_DATABASE_URL: database.url } : {};
      const dataDir = join(work, "data");
      const credentialsFile = join(work, "credentials.json");
      const seeded = await runMdq(
        ["demo", "--seed-only", "--days", String(DAYS), "--data", dataDir, "--credentials", credentialsFile],
        storeEnv,
      );
      assert.equal(seeded.code, 0, seeded.stderr);
      serve = await startServe(dataDir, storeEnv);
      proxy = await startFaultProxy(serve.url);
      const app = (
        JSON.parse(await readFile(credentialsFile, "utf8")) as {
          apps: { appClientId: string; appClientSecret: string; brandClientId: string }[];
        }
      ).apps[0]!;
      env = {
        PATH: process.env.PATH,
        MDQ_APP_CLIENT_ID: app.appClientId,
        MDQ_APP_CLIENT_SECRET: app.appClientSecret,
        MDQ_BRAND_CLIENT_ID: app.brandClientId,
        MDQ_AUTH_URL: proxy.url,
        MDQ_BASE_URL: proxy.url,
      };
    });
    after(async () => {
      await proxy?.close();
      await serve?.stop();
      await database?.drop();
      await rm(work, { recursive: true, force: true });
    });

    it("sync writes the page walk's bytes, in CSV and NDJSON, with one export per window and no page", async () => {
      for (const [name, extra, windows] of [
        ["week.csv", [], 5],
        ["month.ndjson", ["--window-days", "30", "--page-size", "1000"], 1],
      ] as const) {
        const range = ["sync", "--from", from, "--to", to, ...extra];
        const exported = await client([...range, "--out", join(work, `export-${name}`)]);
        assert.deepEqual([exported.exports, exported.pages], [windows, 0], exported.run.stderr);
        const walked = await client([...range, "--page-walk", "--out", join(work, `walk-${name}`)]);
        assert.equal(walked.exports, 0);
        assert.ok(walked.pages >= windows);
        const bytes = await readFile(join(work, `export-${name}`));
        assert.ok(bytes.length > 10_000, `only ${bytes.length} bytes`);
        assert.ok(
          bytes.equals(await readFile(join(work, `walk-${name}`))),
          `${name} differs from the walk's`,
        );
      }
    });

    it("mirror writes the page walk's files, in CSV and NDJSON", async () => {
      for (const format of ["csv", "ndjson"]) {
        const range = ["mirror", "--from", from, "--to", to, "--format", format, "--quiet"];
        const exported = await client([...range, "--dir", join(work, `mirror-export-${format}`)]);
        assert.deepEqual([exported.exports, exported.pages], [1, 0]);
        const walked = await client([...range, "--page-walk", "--dir", join(work, `mirror-walk-${format}`)]);
        assert.equal(walked.exports, 0);
        await assertSameMirrorFiles(
          join(work, `mirror-export-${format}`),
          join(work, `mirror-walk-${format}`),
        );
      }
    });

    it("reads a window again from the new version when a load lands while it downloads, and ends as a fresh sync", async () => {
      const restated = join(work, "restated.csv");
      await writeFile(
        restated,
        `${LOAD_HEADER}\nrestated-${from},${from},GB,google_ads,search,c-r,Restated,10,1,2.50,0.5,4.00,GBP\n`,
      );
      // The first export is cut mid-body after the load: its resume finds the version gone (409).
      proxy.script(EXPORT_PATH, [{ cutAfterBytes: 2000 }]);
      proxy.onResponse = async (seen) => {
        if (seen.path !== EXPORT_PATH) return;
        proxy.onResponse = undefined;
        const loaded = await runMdq(
          ["load", restated, "--brand", "brand-acme", "--data", serve.dataDir],
          storeEnv,
        );
        assert.equal(loaded.code, 0, loaded.stderr);
      };
      const range = ["sync", "--from", from, "--to", to];
      const out = join(work, "loaded.ndjson");
      const cut = await client([...range, "--out", out]);
      assert.match(
        cut.run.stderr,
        new RegExp(`the data of ${from}\\.\\.\\S+ changed while it was read; reading it again`),
      );
      assert.equal(cut.exports, 5 + 2, "the cut window's resume (409) and its new export");
      const fresh = join(work, "fresh.ndjson");
      await client([...range, "--page-walk", "--out", fresh]);
      const text = await readFile(out, "utf8");
      assert.equal(text, await readFile(fresh, "utf8"));
      const days = text
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as { recordId: string; date: string })
        .filter((record) => record.date === from);
      assert.deepEqual(
        days.map((record) => record.recordId),
        [`restated-${from}`],
      );
    });
  });
}
