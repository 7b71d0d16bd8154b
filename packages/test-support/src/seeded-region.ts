/**
 * The set-up every in-process region shares: a temporary data directory, the configuration with
 * test defaults, and a DuckDB store seeded with the demo region's brands, apps and data days.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConfigInput,
  type DemoCredentials,
  type DuckDbStore,
  loadConfig,
  openDuckDbStore,
  type ServiceConfig,
  seedDemoRegion,
  todayIn,
} from "@mdq/server";

/** How much demo data to seed, and where. */
export interface SeedOptions {
  /** Prefix of the temporary data directory's name. */
  prefix: string;
  /** Data days ending yesterday. */
  days: number;
  /** Volume multiplier, as `seedDemoRegion` takes it. */
  scale?: number;
}

/** A seeded store in its data directory, with the configuration it was seeded for. */
export interface SeededRegion {
  /** The input the configuration was loaded from (test defaults, then the caller's). */
  configInput: ConfigInput;
  config: ServiceConfig;
  store: DuckDbStore;
  credentials: DemoCredentials;
  /** Today in the region's time zone. */
  today: string;
  dataDir: string;
  /** Closes the store and deletes the data directory. */
  remove(): Promise<void>;
}

/** Seeds a demo region; `input` overrides the test defaults (region uk, no rate limit to speak of, silent logs). */
export async function seedRegion(input: ConfigInput, options: SeedOptions): Promise<SeededRegion> {
  const dataDir = await mkdtemp(join(tmpdir(), options.prefix));
  const configInput: ConfigInput = {
    region: "uk",
    rateLimitMax: 1_000_000,
    logLevel: "silent",
    dataDir,
    ...input,
  };
  const config = loadConfig({}, configInput);
  const store = await openDuckDbStore(dataDir);
  const today = todayIn(config.timeZone);
  const credentials = await seedDemoRegion(store, {
    region: config.region,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    today,
    days: options.days,
    ...(options.scale === undefined ? {} : { scale: options.scale }),
  });
  return {
    configInput,
    config,
    store,
    credentials,
    today,
    dataDir,
    async remove() {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
