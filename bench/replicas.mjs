#!/usr/bin/env node
// Read replicas (issue 56), the routing check alone: on a private primary with a streaming
// standby (started here, as the tests start them), the time `ReplicaRouter.targetFor` takes to
// choose a read's target (the primary's read of the brand's WAL position, then the choice among
// the observer's last positions) against a `SELECT 1` round trip to the same primary measured in
// the same run: the check's own cost is the difference. Target: median ≤ 1 ms.
// The read bench with standbys and the p99 during a load are issue 56's later part.
//   npm run build && node bench/replicas.mjs [--samples 2000]
import pg from "pg";
import { loadConfig } from "../packages/server/dist/src/config.js";
import { migrateDatabase, openStore } from "../packages/server/dist/src/store/open-store.js";
import { startStandbyPair } from "../packages/test-support/dist/src/index.js";
import { benchArgs } from "./harness/bench-args.mjs";
import { median, percentile } from "./harness/stats.mjs";

const USAGE = `node bench/replicas.mjs [flags]   (after npm run build)

  --samples N   timed calls of each kind (default 2000)
`;
const args = benchArgs("bench/replicas.mjs", USAGE, { samples: { type: "string", default: "2000" } }, [
  "samples",
]);
const samples = Number(args.samples);

/** Milliseconds of each of `samples` awaited calls of `call`, sorted, after 100 unmeasured. */
async function timed(call) {
  for (let index = 0; index < 100; index += 1) await call();
  const times = [];
  for (let index = 0; index < samples; index += 1) {
    const started = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

const pair = await startStandbyPair(1);
try {
  const database = await pair.createDatabase("bench_replicas");
  await migrateDatabase(pair.primary.url(database));
  const config = loadConfig(
    {},
    {
      region: "uk",
      databaseUrl: pair.primary.url(database),
      databaseReplicaUrls: pair.standbys[0].url(database),
      dataDir: "/tmp",
    },
  );
  const router = await openStore(config);
  const brandId = "bench-brand";
  await router.createBrand({ brandId, name: "Bench", createdAt: new Date() });
  await router.addGrants(brandId, { markets: ["GB"], dataSources: ["search"] });
  await pair.standbys[0].caughtUp();
  await router.observer.poll();
  const baseline = new pg.Pool({ connectionString: pair.primary.url(database), max: 1 });
  const select1 = await timed(() => baseline.query("SELECT 1"));
  const check = await timed(() => router.targetFor(brandId));
  const target = await router.targetFor(brandId);
  const line = (name, times) =>
    `${name.padEnd(28)} median ${median(times).toFixed(3)} ms   p99 ${percentile(times, 99).toFixed(3)} ms`;
  console.log(line("SELECT 1 on the primary", select1));
  console.log(line("routing check (targetFor)", check));
  console.log(
    `routing check / SELECT 1: ${(median(check) / median(select1)).toFixed(2)}×; chose ${target}; ` +
      `${median(check) <= 1 ? "MET" : "MISSED"} (median ≤ 1 ms)`,
  );
  await baseline.end();
  await router.close();
} finally {
  await pair.stop();
}
