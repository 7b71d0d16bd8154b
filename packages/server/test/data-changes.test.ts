/**
 * Data versions and `marketingDataChanges` (CONTRACT §6 rules 1–2), through the admin API and
 * GraphQL over HTTP handling, on both stores: restated days are listed exactly, an FX change lists
 * its day and every later day with data, scope changes require a full resync, versions only grow,
 * survive a restart, and a bad `since` answers INVALID_DATA_VERSION.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { addDays } from "../src/calendar.js";
import { buildService, type Service } from "../src/server.js";
import {
  CHANGES,
  type Changes,
  COUNT,
  changesRegion,
  DAYS,
  engines,
  HEADER,
  READINESS,
} from "./changes-harness.js";

for (const engine of engines()) {
  describe(`data versions and marketingDataChanges: ${engine.name}`, () => {
    const region = changesRegion(engine);
    const { admin, changes, first, graphql, last, load, whole } = region;

    it("lists every day that has data with since null, each with the caller's visible rows", async () => {
      const listed = await changes(whole(), null);
      assert.match(listed.dataVersion, /^uk\.\d+$/);
      assert.equal(listed.fullResyncRequired, false);
      assert.equal(listed.reason, null);
      assert.deepEqual(
        listed.days.map((day) => day.date),
        Array.from({ length: DAYS }, (_, index) => addDays(first(), index)),
      );
      // The rows of the first 30 days are exactly what marketingRecords counts there.
      const range = { from: first(), to: addDays(first(), 29) };
      const page = await graphql(COUNT, { c: "brand-acme", r: range });
      const totalCount = (
        page.body["extensions"] as { pageInfo: { marketingRecords: { totalCount: number } } }
      ).pageInfo.marketingRecords.totalCount;
      const summed = listed.days.slice(0, 30).reduce((sum, day) => sum + day.rows, 0);
      assert.equal(summed, totalCount);
      // The narrowed app sees fewer rows on the same days.
      const narrowed = await changes(whole(), null, "app-acme-uk");
      assert.ok(narrowed.days.every((day, index) => day.rows < listed.days[index]!.rows));
    });

    it("lists nothing when nothing changed since the version it returned", async () => {
      const { dataVersion } = await changes(whole(), null);
      const again = await changes(whole(), dataVersion);
      assert.deepEqual(again, { dataVersion, fullResyncRequired: false, reason: null, days: [] });
    });

    it("gives the brand's version for a range that holds no day at all", async () => {
      const { dataVersion } = await changes(whole(), null);
      const empty = { from: addDays(first(), -400), to: addDays(first(), -300) };
      assert.deepEqual(await changes(empty, null), {
        dataVersion,
        fullResyncRequired: false,
        reason: null,
        days: [],
      });
    });

    it("lists exactly the 3 restated days, with their new rows, and pageInfo and readiness speak the new version", async () => {
      const before = await changes(whole(), null);
      const restated = [addDays(first(), 10), addDays(first(), 11), addDays(first(), 40)];
      await load(
        "restate.csv",
        restated.flatMap((date) => [
          `r-${date}-1,${date},GB,google_ads,search,c-1,Restated,10,1,2.50,0.5,4.00,GBP`,
          `r-${date}-2,${date},ES,google_ads,search,c-1,Restated,10,1,2.50,0.5,4.00,EUR`,
        ]),
      );
      const after = await changes(whole(), before.dataVersion);
      assert.ok(BigInt(after.dataVersion.slice(3)) > BigInt(before.dataVersion.slice(3)));
      // ES is stored but outside brand-acme's grants: one visible row a day.
      assert.deepEqual(
        after.days.map((day) => [day.date, day.rows, day.dataVersion]),
        restated.map((date) => [date, 1, after.dataVersion]),
      );
      for (const day of after.days) assert.ok(Date.now() - Date.parse(day.changedAt) < 60_000);

      const readiness = await graphql(READINESS, { c: "brand-acme" });
      assert.deepEqual(readiness.body.data, { marketingDataReadiness: { dataVersion: after.dataVersion } });
      const touched = await graphql(COUNT, { c: "brand-acme", r: { from: restated[0], to: restated[0] } });
      const untouched = await graphql(COUNT, {
        c: "brand-acme",
        r: { from: addDays(first(), 50), to: last() },
      });
      const versionOf = (response: typeof touched) =>
        (response.body["extensions"] as { pageInfo: { marketingRecords: { dataVersion: string } } }).pageInfo
          .marketingRecords.dataVersion;
      assert.equal(versionOf(touched), after.dataVersion);
      assert.ok(BigInt(versionOf(untouched).slice(3)) < BigInt(after.dataVersion.slice(3)));
    });

    it("lists a day whose restatement emptied it, with 0 rows", async () => {
      const { dataVersion } = await changes(whole(), null);
      const day = addDays(first(), 20);
      await load("empty-visible.csv", [
        `e-${day},${day},ES,google_ads,search,c-1,Hidden,1,1,1.00,0,1.00,EUR`,
      ]);
      const after = await changes(whole(), dataVersion);
      assert.deepEqual(
        after.days.map((entry) => [entry.date, entry.rows]),
        [[day, 0]],
      );
    });

    it("after an FX change of one GBP rate lists that day and every later day with data, none before", async () => {
      const { dataVersion } = await changes(whole(), null);
      const changedDay = addDays(first(), 45);
      const path = join(region.work, "fx.csv");
      await writeFile(path, `date,currency,rate\n${changedDay},GBP,0.91234\n`);
      await admin("/admin/fx", { path });
      const after = await changes(whole(), dataVersion);
      const expected = Array.from({ length: DAYS - 45 }, (_, index) => addDays(changedDay, index));
      assert.deepEqual(
        after.days.map((day) => day.date),
        expected,
      );
      assert.ok(after.days.every((day) => day.dataVersion === after.dataVersion && day.rows > 0));
      // The same rates again change nothing.
      await admin("/admin/fx", { path });
      assert.deepEqual((await changes(whole(), after.dataVersion)).days, []);
    });

    it("requires a full resync after a grant removal, and the listing shows what is visible now", async () => {
      const { dataVersion } = await changes(whole(), null, "app-globex-bi", "brand-globex");
      await admin("/admin/grants/remove", { brandId: "brand-globex", markets: ["JP"] });
      const after = await changes(whole(), dataVersion, "app-globex-bi", "brand-globex");
      assert.equal(after.fullResyncRequired, true);
      assert.equal(after.reason, "the brand's grants changed: removed markets or data sources");
      assert.equal(after.days.length, DAYS);
      // Another brand's clients are not affected.
      const acme = await changes(whole(), null);
      assert.equal((await changes(whole(), acme.dataVersion)).fullResyncRequired, false);
    });

    it("requires a full resync of a narrowed app's clients only", async () => {
      const uk = await changes(whole(), null, "app-acme-uk");
      const analytics = await changes(whole(), null, "app-acme-analytics");
      await admin("/admin/apps/app-acme-uk/narrow", { dataSources: ["google_ads"] });
      const after = await changes(whole(), uk.dataVersion, "app-acme-uk");
      assert.equal(after.fullResyncRequired, true);
      assert.equal(after.reason, "the markets or data sources app app-acme-uk is narrowed to changed");
      assert.equal(
        (await changes(whole(), analytics.dataVersion, "app-acme-analytics")).fullResyncRequired,
        false,
      );
    });

    it("answers INVALID_DATA_VERSION for garbage, another region's, a future or an empty since, and 403 for another brand", async () => {
      const { dataVersion } = await changes(whole(), null);
      const future = `uk.${BigInt(dataVersion.slice(3)) + 1000n}`;
      for (const since of ["garbage", "us.1", future, "", "uk.-1", "uk.01"]) {
        const response = await graphql(CHANGES, { c: "brand-acme", r: whole(), s: since });
        assert.equal(response.status, 200);
        assert.equal(response.body.data, null, since);
        assert.deepEqual(
          (response.body["errors"] as { extensions: { code: string } }[]).map(
            (error) => error.extensions.code,
          ),
          ["INVALID_DATA_VERSION"],
          since,
        );
      }
      const forbidden = await graphql(CHANGES, { c: "brand-globex", r: whole(), s: null });
      assert.equal(forbidden.status, 403);
    });

    it("checks the range: at most 366 days, to not before from", async () => {
      const tooLong = await graphql(CHANGES, {
        c: "brand-acme",
        r: { from: addDays(last(), -366), to: last() },
      });
      assert.deepEqual(
        (tooLong.body["errors"] as { extensions: { code: string } }[]).map((error) => error.extensions.code),
        ["DATE_RANGE_TOO_LONG"],
      );
      const year = await changes({ from: addDays(last(), -365), to: last() }, null);
      assert.deepEqual(year, await changes(whole(), null));
      const reversed = await graphql(CHANGES, { c: "brand-acme", r: { from: last(), to: first() } });
      assert.deepEqual(
        (reversed.body["errors"] as { extensions: { code: string } }[]).map((error) => error.extensions.code),
        ["INVALID_DATE_RANGE"],
      );
    });

    it("with --replace sources, replaces only the (day, data source) pairs of the file and lists the day", async () => {
      const day = addDays(first(), 33);
      const bySource = async (dataSource: string) => {
        const page = await graphql(
          `query($c: ID!, $r: DateRangeInput!, $f: MarketingFilterInput) {
            marketingRecords(clientId: $c, dateRange: $r, filter: $f, pagination: {pageSize: 5000}) { recordId }
          }`,
          { c: "brand-acme", r: { from: day, to: day }, f: { dataSources: [dataSource] } },
        );
        const records = page.body.data?.["marketingRecords"] as { recordId: string }[] | undefined;
        assert.ok(records, JSON.stringify(page.body));
        return records.map((row) => row.recordId).sort();
      };
      const googleBefore = await bySource("google_ads");
      const tiktokBefore = await bySource("tiktok_ads");
      assert.ok(googleBefore.length > 0 && tiktokBefore.length > 0);
      const { dataVersion } = await changes(whole(), null);
      const path = join(region.work, "meta-only.csv");
      await writeFile(
        path,
        `${HEADER}\nmeta-${day}-1,${day},GB,meta_ads,social,c-m,Meta restated,5,1,1.00,0,2.00,GBP\n`,
      );
      await admin("/admin/loads", { brandId: "brand-acme", path, replace: "sources" });
      assert.deepEqual(await bySource("meta_ads"), [`meta-${day}-1`]);
      assert.deepEqual(await bySource("google_ads"), googleBefore);
      assert.deepEqual(await bySource("tiktok_ads"), tiktokBefore);
      const after = await changes(whole(), dataVersion);
      assert.deepEqual(
        after.days.map((entry) => [entry.date, entry.rows]),
        [[day, googleBefore.length + tiktokBefore.length + 1]],
      );
    });

    if (engine.name === "postgres") {
      it("gives identical versions and changes on a second instance over the same database", async () => {
        const otherStore = await engine.open();
        const other = await buildService(region.config, { store: otherStore });
        try {
          const ask = async (instance: Service, since: string | null) => {
            const issued = await instance.app.inject({
              method: "POST",
              url: "/oauth2/token",
              headers: {
                authorization: `Basic ${Buffer.from(`${region.credentials.apps[0]!.appClientId}:${region.credentials.apps[0]!.appClientSecret}`).toString("base64")}`,
                "content-type": "application/x-www-form-urlencoded",
              },
              payload: "grant_type=client_credentials&scope=api_data%2Fread",
            });
            const response = await instance.app.inject({
              method: "POST",
              url: "/graphql",
              headers: {
                authorization: `Bearer ${issued.json().access_token}`,
                "content-type": "application/json",
              },
              payload: JSON.stringify({
                query: CHANGES,
                variables: { c: "brand-acme", r: whole(), s: since },
              }),
            });
            return response.json().data.marketingDataChanges as Changes;
          };
          const { dataVersion } = await ask(region.service, null);
          assert.deepEqual(await ask(other, null), await ask(region.service, null));
          const day = addDays(first(), 7);
          await load("via-first.csv", [
            `i-${day},${day},GB,google_ads,search,c-i,Instance,1,1,1.00,0,1.00,GBP`,
          ]);
          const seenByOther = await ask(other, dataVersion);
          assert.deepEqual(seenByOther, await ask(region.service, dataVersion));
          assert.deepEqual(
            seenByOther.days.map((entry) => entry.date),
            [day],
          );
        } finally {
          await other.app.close();
          await otherStore.close();
        }
      });
    }

    it("keeps versions and changes across a restart of the store", async () => {
      const beforeRestart = await changes(whole(), null);
      const version = beforeRestart.dataVersion;
      await region.restart();
      const afterRestart = await changes(whole(), null);
      assert.deepEqual(afterRestart, beforeRestart);
      assert.deepEqual((await changes(whole(), version)).days, []);
      const day = addDays(first(), 5);
      await load("after-restart.csv", [`x-${day},${day},GB,meta_ads,social,c-9,After,1,1,1.00,0,1.00,GBP`]);
      const next = await changes(whole(), version);
      assert.ok(BigInt(next.dataVersion.slice(3)) > BigInt(version.slice(3)));
      assert.deepEqual(
        next.days.map((entry) => entry.date),
        [day],
      );
    });
  });
}
