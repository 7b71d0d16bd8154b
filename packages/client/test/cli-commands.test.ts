/**
 * `mdq-client` one-off commands, `sync --wait-ready`, exit codes and credential handling, run as
 * a process against a real service.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  addDays,
  type CliRun,
  cliEnv,
  type FaultProxy,
  graphqlError,
  type RunningService,
  runCli,
  serviceQuery,
  startCli,
  startFaultProxy,
  startService,
} from "@mdq/test-support";

describe("mdq-client as a process", () => {
  let region: RunningService;
  let proxy: FaultProxy;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let brand: string;
  /** Every run of this file, to check that no output ever shows a secret. */
  const runs: CliRun[] = [];
  const run = async (args: string[], environment: NodeJS.ProcessEnv = env) => {
    const result = await runCli(args, environment);
    runs.push(result);
    return result;
  };

  before(async () => {
    region = await startService({ days: 40 });
    proxy = await startFaultProxy(region.url);
    dir = await mkdtemp(join(tmpdir(), "mdq-client-commands-"));
    env = cliEnv(region);
    brand = region.credentials.apps[0]!.brandClientId;
  });
  after(async () => {
    await proxy.close();
    await region.close();
    await rm(dir, { recursive: true, force: true });
  });

  // Independent commands, run side by side; the secret check below then reads all their output.
  describe("one-off commands, readiness wait and exit codes", { concurrency: true }, () => {
    it("readiness prints marketingDataReadiness as JSON, or as a table", async () => {
      const json = await run(["readiness"]);
      assert.equal(json.code, 0, json.stderr);
      const answer = JSON.parse(json.stdout);
      const lastProcessedAt = answer.lastProcessedAt;
      assert.match(lastProcessedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.match(answer.dataVersion, /^uk\.\d+$/);
      assert.deepEqual(answer, {
        status: "READY",
        lastProcessedAt,
        date: region.today,
        availableThrough: region.lastDay,
        dataVersion: answer.dataVersion,
      });
      assert.equal(json.stderr, "");

      const table = await run(["readiness", "--date", region.lastDay, "--format", "table"]);
      assert.equal(table.code, 0, table.stderr);
      // A test beside this one publishes another date, which may move lastProcessedAt in between.
      const [header, row, end] = table.stdout.split("\n");
      assert.equal(header, "STATUS     DATE        LAST_PROCESSED_AT         AVAILABLE_THROUGH");
      assert.match(
        row!,
        new RegExp(
          `^NOT_READY  ${region.lastDay}  \\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z  ${region.lastDay}$`,
        ),
      );
      assert.equal(end, "");
      assert.equal(table.stdout.split("\n").length, 3);
    });

    it("access prints myAccess: the app's narrowed grants, scope, region and token expiry", async () => {
      const narrowed = region.credentials.apps.findIndex((app) => app.appClientId === "app-acme-uk");
      const json = await run(["access"], cliEnv(region, { appIndex: narrowed }));
      assert.equal(json.code, 0, json.stderr);
      const answer = JSON.parse(json.stdout);
      assert.match(answer.tokenExpiresAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.ok(Date.parse(answer.tokenExpiresAt) > Date.now() + 3_000_000);
      assert.deepEqual(answer, {
        brandId: "brand-acme",
        appClientId: "app-acme-uk",
        markets: ["GB"],
        dataSources: ["google_ads", "meta_ads"],
        scope: "api_data/read",
        region: "uk",
        tokenExpiresAt: answer.tokenExpiresAt,
      });

      const table = await run(["access", "--format", "table"], cliEnv(region, { appIndex: narrowed }));
      assert.equal(table.code, 0, table.stderr);
      const [header, row] = table.stdout.split("\n");
      assert.match(header!, /^BRAND +APP +MARKETS +DATA_SOURCES +SCOPE +REGION +TOKEN_EXPIRES_AT$/);
      assert.match(row!, /^brand-acme +app-acme-uk +GB +google_ads,meta_ads +api_data\/read +uk +\d{4}-/);
    });

    it("records prints the service's records as JSON, oldest day first, up to --limit", async () => {
      const from = addDays(region.lastDay, -2);
      const result = await run(["records", "--from", from, "--to", region.lastDay, "--limit", "3"]);
      assert.equal(result.code, 0, result.stderr);
      const expected = await serviceQuery(
        region,
        `query($c: ID!, $r: DateRangeInput!) {
        marketingRecords(clientId: $c, dateRange: $r, sort: [{field: DATE_DAY, direction: ASC}]) {
          recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions revenue currency
        }
      }`,
        { c: brand, r: { from, to: region.lastDay } },
      );
      assert.deepEqual(
        JSON.parse(result.stdout),
        (expected.data["marketingRecords"] as unknown[]).slice(0, 3),
      );
    });

    it("aggregate prints the grouped dimensions and requested totals as JSON", async () => {
      const from = addDays(region.lastDay, -29);
      const result = await run([
        "aggregate",
        "--from",
        from,
        "--to",
        region.lastDay,
        "--metrics",
        "spend,impressions",
        "--group-by",
        "market",
        "--sort",
        "TOTAL_SPEND:DESC",
        "--currency",
        "gbp",
      ]);
      assert.equal(result.code, 0, result.stderr);
      const expected = await serviceQuery(
        region,
        `query($c: ID!, $r: DateRangeInput!) {
        marketingAggregate(clientId: $c, dateRange: $r, metrics: [SPEND, IMPRESSIONS], groupBy: [MARKET],
                           currency: GBP, sort: [{field: TOTAL_SPEND, direction: DESC}]) {
          MARKET TOTAL_SPEND TOTAL_IMPRESSIONS currency
        }
      }`,
        { c: brand, r: { from, to: region.lastDay } },
      );
      assert.deepEqual(JSON.parse(result.stdout), expected.data["marketingAggregate"]);
    });

    it("aggregate over more than 90 days without a date dimension is a usage error (exit 2)", async () => {
      const result = await run([
        "aggregate",
        "--from",
        "2025-01-01",
        "--to",
        "2025-12-31",
        "--metrics",
        "SPEND",
        "--group-by",
        "MARKET",
      ]);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /^mdq-client: the service totals at most 90 days at a time/);
    });

    it("sync --wait-ready exits 3 after --timeout while the processing date is unpublished, and syncs once it is published", async () => {
      const tomorrow = addDays(region.today, 1);
      const out = join(dir, "ready.csv");
      const args = ["sync", "--from", region.lastDay, "--to", region.lastDay, "--out", out, "--wait-ready"];
      const started = Date.now();
      const late = await run([
        ...args,
        "--ready-date",
        tomorrow,
        "--timeout",
        "1s",
        "--poll-interval",
        "200ms",
      ]);
      assert.equal(late.code, 3, late.stderr);
      assert.ok(Date.now() - started >= 1000, "waited for the whole --timeout");
      assert.match(late.stderr, new RegExp(`the data for ${tomorrow} is still not ready \\(NOT_READY\\)`));
      assert.equal(existsSync(out), false);

      const waiting = startCli(
        [...args, "--ready-date", tomorrow, "--timeout", "60s", "--poll-interval", "100ms"],
        env,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(waiting.child.exitCode, null, "still waiting");
      await region.service.store.publish(brand, tomorrow, new Date());
      const ready = await waiting.done;
      runs.push(ready);
      assert.equal(ready.code, 0, ready.stderr);
      assert.match(ready.stderr, new RegExp(`the data for ${tomorrow} is READY`));
      assert.equal(existsSync(out), true);
    });

    it("maps failures to exit codes: 2 usage, 4 bad credentials, 5 forbidden, 6 rate limited, 7 invalid query", async () => {
      const range = ["--from", region.lastDay, "--to", region.lastDay];
      const noSecret = await run(
        ["readiness"],
        cliEnv(region, { overrides: { MDQ_APP_CLIENT_SECRET: undefined } }),
      );
      assert.equal(noSecret.code, 2);
      assert.equal(noSecret.stderr, "mdq-client: MDQ_APP_CLIENT_SECRET is not set (INVALID_CONFIG)\n");

      const badDate = await run(["records", "--from", "2026-02-30", "--to", region.lastDay]);
      assert.equal(badDate.code, 2);
      assert.match(badDate.stderr, /--from <date>' argument '2026-02-30' is invalid/);

      const wrongSecret = await run(
        ["readiness"],
        cliEnv(region, { overrides: { MDQ_APP_CLIENT_SECRET: "not-the-secret-0123456789" } }),
      );
      assert.equal(wrongSecret.code, 4);
      assert.match(wrongSecret.stderr, /AUTH_FAILED\)\n$/);
      assert.doesNotMatch(wrongSecret.stderr, /not-the-secret/);

      // app-acme-uk may read GB only.
      const forbidden = await run(["records", ...range, "--markets", "DE"], cliEnv(region, { appIndex: 1 }));
      assert.equal(forbidden.code, 5);
      assert.match(forbidden.stderr, /\(403 FORBIDDEN\)\n$/);

      const invalid = await run(["records", ...range, "--currency", "XXX"]);
      assert.equal(invalid.code, 7);
      assert.match(invalid.stderr, /GRAPHQL_VALIDATION_FAILED|BAD_USER_INPUT/);

      proxy.script("/graphql", [graphqlError(429, "RATE_LIMITED", { "retry-after": "3600" })]);
      const limited = await run(
        ["readiness"],
        cliEnv(region, { overrides: { MDQ_AUTH_URL: proxy.url, MDQ_BASE_URL: proxy.url } }),
      );
      assert.equal(limited.code, 6);
      assert.match(limited.stderr, /\(429 RATE_LIMITED\)\n$/);
    });
  });

  it("takes credentials from the environment only and never prints a secret", async () => {
    const help = await run(["sync", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /MDQ_APP_CLIENT_ID, MDQ_APP_CLIENT_SECRET {2}the app's credentials/);
    assert.doesNotMatch(help.stdout, /--[a-z-]*(secret|client-id)/);
    const flag = await run(["readiness", "--client-secret", "s3cret"]);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /unknown option '--client-secret'/);
    // Every run of this file, failures included.
    const secrets = region.credentials.apps.map((app) => app.appClientSecret);
    for (const result of runs) {
      for (const secret of secrets) {
        assert.equal(result.stdout.includes(secret), false);
        assert.equal(result.stderr.includes(secret), false);
      }
    }
    assert.ok(runs.length >= 10, `only ${runs.length} runs checked`);
  });
});
