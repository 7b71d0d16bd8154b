/**
 * Exit 7 tells what the brand can fix from what only the operator can (issue 57): an
 * UNSUPPORTED_CURRENCY for the currency asked for is the flags' (another `--currency`); one for
 * the brand's stored records' own currency, which no flag helps, says to contact the operator.
 * The stored rows are written straight into the store, as an older release's load let them in.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { cliEnv, type RunningService, runCli, startService } from "@mdq/test-support";

/** Days long before the demo's first FX rate. */
const CHF_DAY = "2000-01-03";
const EUR_DAY = "2000-01-04";

describe("mdq-client exit 7 for UNSUPPORTED_CURRENCY", { timeout: 60_000 }, () => {
  let region: RunningService;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    region = await startService({ days: 3 });
    env = cliEnv(region);
    const brandId = region.credentials.apps[0]!.brandClientId;
    const { markets, dataSources } = await region.service.store.brandGrants(brandId);
    const row = (recordId: string, date: string, currency: "CHF" | "EUR") => ({
      recordId,
      date,
      market: markets[0]!,
      dataSource: dataSources[0]!,
      channel: "search",
      campaignId: `c-${recordId}`,
      campaignName: "Old",
      impressions: 10,
      clicks: 1,
      spendE4: 10_000n,
      conversionsE4: 0n,
      revenueE4: 0n,
      currency,
    });
    await region.service.store.replaceRecords(brandId, [
      row("old-chf", CHF_DAY, "CHF"),
      row("old-eur", EUR_DAY, "EUR"),
    ]);
  });
  after(async () => {
    await region.close();
  });

  it("names the stored records' currency and says only the operator can help, whatever the flags", async () => {
    for (const currency of ["EUR", "USD"]) {
      const result = await runCli(
        ["records", "--from", CHF_DAY, "--to", CHF_DAY, "--currency", currency],
        env,
      );
      assert.equal(result.code, 7, result.stderr);
      assert.equal(result.stdout, "");
      assert.match(
        result.stderr,
        /^mdq-client: cannot convert: there is no (CHF|USD) reference rate on or before 2000-01-03, /,
      );
    }
    const eur = await runCli(["records", "--from", CHF_DAY, "--to", CHF_DAY], env);
    assert.equal(eur.code, 7);
    assert.equal(
      eur.stderr,
      "mdq-client: cannot convert: there is no CHF reference rate on or before 2000-01-03, the currency of the brand's stored records: only the region's operator can load the missing rates; contact them (200 UNSUPPORTED_CURRENCY)\n",
    );
  });

  it("names the currency asked for when its own rate is missing: the brand can ask for another", async () => {
    const gbp = await runCli(["records", "--from", EUR_DAY, "--to", EUR_DAY, "--currency", "GBP"], env);
    assert.equal(gbp.code, 7);
    assert.equal(
      gbp.stderr,
      "mdq-client: cannot convert: there is no GBP reference rate on or before 2000-01-04, the currency asked for: ask for another currency (EUR needs no rate of its own) or leave out the money fields (200 UNSUPPORTED_CURRENCY)\n",
    );
    const eur = await runCli(["records", "--from", EUR_DAY, "--to", EUR_DAY], env);
    assert.equal(eur.code, 0, eur.stderr);
  });

  it("documents the difference in the exit codes of --help", async () => {
    const help = await runCli(["sync", "--help"], env);
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      / {2}7 {2}invalid query: the service refused the query \(DATE_RANGE_TOO_LONG, UNSUPPORTED_CURRENCY, \.\.\.\):\n {5}fix the flags; but UNSUPPORTED_CURRENCY naming "the currency of the brand's stored records"\n {5}is no flag's fault: only the operator can load the missing FX rates, contact them\n/,
    );
  });
});
