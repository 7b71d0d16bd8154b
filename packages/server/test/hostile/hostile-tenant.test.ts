/**
 * The service against a hostile tenant (issue 20), on both stores: `since` versions a store cannot
 * hold answer INVALID_DATA_VERSION (never 500); a narrowed app's `reason` names only what it may
 * read; one brand's loads never move another brand's data versions, which still only grow and
 * survive a restart (CONTRACT §6.1); `myAccess` and cached pages stay inside the caller's grants.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addDays } from "../../src/calendar.js";
import { CHANGES, changesRegion, engines, READINESS } from "../changes-harness.js";

const RECORDS = `query($c: ID!, $r: DateRangeInput!, $cur: Currency) {
  marketingRecords(clientId: $c, dateRange: $r, currency: $cur, pagination: {pageSize: 5000}) { market dataSource spend currency }
}`;
const MY_ACCESS = "query($c: ID!) { myAccess(clientId: $c) { appClientId markets dataSources } }";

function codesOf(body: Record<string, unknown>): string[] {
  return ((body["errors"] as { extensions: { code: string } }[] | undefined) ?? []).map(
    (error) => error.extensions.code,
  );
}

for (const engine of engines()) {
  describe(`the service against a hostile tenant: ${engine.name}`, () => {
    const region = changesRegion(engine);
    const { admin, changes, graphql, load, whole } = region;

    it("answers INVALID_DATA_VERSION, not 500, for a since past what a store can hold", async () => {
      for (const since of ["uk.9999999999999999999", "uk.9223372036854775808", "uk.18446744073709551615"]) {
        const response = await graphql(CHANGES, { c: "brand-acme", r: whole(), s: since });
        assert.equal(response.status, 200, since);
        assert.equal(response.body.data, null, since);
        assert.deepEqual(codesOf(response.body), ["INVALID_DATA_VERSION"], since);
      }
    });

    it("names in a narrowed app's reason only the markets and data sources it may read", async () => {
      const uk = await changes(whole(), null, "app-acme-uk");
      const access = await graphql(MY_ACCESS, { c: "brand-acme" }, "app-acme-uk");
      const visible = access.body.data?.["myAccess"] as { markets: string[]; dataSources: string[] };
      assert.deepEqual(visible.markets, ["GB"]);
      await admin("/admin/grants", {
        brandId: "brand-acme",
        markets: ["GB", "SE", "JP"],
        dataSources: [...visible.dataSources, "snapchat_ads"],
      });
      const after = await changes(whole(), uk.dataVersion, "app-acme-uk");
      assert.equal(after.fullResyncRequired, true);
      assert.equal(
        after.reason,
        `the brand's grants changed: added markets GB and data sources ${visible.dataSources.join(", ")}`,
      );
      for (const hidden of ["SE", "JP", "snapchat_ads"])
        assert.ok(!after.reason!.includes(hidden), after.reason!);
      // The app that reads everything the brand holds is told everything that was added.
      const full = await changes(whole(), uk.dataVersion, "app-acme-analytics");
      assert.match(full.reason!, /added markets GB, JP, SE and data sources .*snapchat_ads/);
    });

    it("moves no brand's data version with another brand's load; versions still only grow and survive a restart", async () => {
      const acmeBefore = await changes(whole(), null);
      const acmeReadiness = await graphql(READINESS, { c: "brand-acme" });
      const day = addDays(region.first(), 3);
      await load(
        "globex.csv",
        [`g-${day},${day},JP,google_ads,search,c-g,Globex only,1,1,1.00,0,1.00,EUR`],
        "brand-globex",
      );
      const globex = await changes(whole(), null, "app-globex-bi", "brand-globex");
      assert.ok(BigInt(globex.dataVersion.slice(3)) > BigInt(acmeBefore.dataVersion.slice(3)));
      const acmeAfter = await changes(whole(), null);
      assert.equal(acmeAfter.dataVersion, acmeBefore.dataVersion);
      assert.deepEqual(await graphql(READINESS, { c: "brand-acme" }), acmeReadiness);
      assert.deepEqual((await changes(whole(), acmeBefore.dataVersion)).days, []);
      // Acme's own load moves its version past every version issued before (it only grows).
      await load("acme.csv", [`a-${day},${day},GB,google_ads,search,c-a,Acme,1,1,1.00,0,1.00,GBP`]);
      const acmeLoaded = await changes(whole(), acmeBefore.dataVersion);
      assert.ok(BigInt(acmeLoaded.dataVersion.slice(3)) > BigInt(globex.dataVersion.slice(3)));
      assert.deepEqual(
        acmeLoaded.days.map((entry) => entry.date),
        [day],
      );
      await region.restart();
      assert.equal((await changes(whole(), null)).dataVersion, acmeLoaded.dataVersion);
      assert.equal(
        (await changes(whole(), null, "app-globex-bi", "brand-globex")).dataVersion,
        globex.dataVersion,
      );
    });

    it("keeps myAccess and every page inside a narrowed app's grants, whatever was cached for a wider app or another currency", async () => {
      const range = { from: region.first(), to: addDays(region.first(), 2) };
      const wide = await graphql(RECORDS, { c: "brand-acme", r: range, cur: "GBP" });
      const wideRows = wide.body.data?.["marketingRecords"] as { market: string }[];
      assert.ok(wideRows.some((row) => row.market !== "GB"));
      const narrow = await graphql(RECORDS, { c: "brand-acme", r: range, cur: "GBP" }, "app-acme-uk");
      const rows = narrow.body.data?.["marketingRecords"] as { market: string; currency: string }[];
      assert.ok(rows.length > 0 && rows.every((row) => row.market === "GB" && row.currency === "GBP"));
      const euros = await graphql(RECORDS, { c: "brand-acme", r: range }, "app-acme-uk");
      const euroRows = euros.body.data?.["marketingRecords"] as { currency: string }[];
      assert.ok(euroRows.length === rows.length && euroRows.every((row) => row.currency === "EUR"));
      const forbidden = await graphql(MY_ACCESS, { c: "brand-globex" }, "app-acme-uk");
      assert.equal(forbidden.status, 403);
    });
  });
}
