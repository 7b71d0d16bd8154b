/**
 * Seeds a store with the demo region of `demo-data.ts`: brands, grants, apps with fresh secrets,
 * FX rates, records, and a completed publish for today. Returns the credentials JSON of
 * CONTRACT §4 (the only place the secrets are ever shown).
 */
import { generateAppSecret, hashAppSecret } from "../oauth/app-secrets.js";
import type { BrandDirectory, RecordLoads } from "../store/model/store.js";
import { type DemoOptions, demoRecordCount, demoRecords, planDemo } from "./demo-data.js";

/** `mdq demo`'s credentials file (CONTRACT §4). */
export interface DemoCredentials {
  region: string;
  authUrl: string;
  baseUrl: string;
  apps: {
    name: string;
    appClientId: string;
    appClientSecret: string;
    brandClientId: string;
    markets: string[];
    dataSources: string[];
  }[];
}

export interface DemoSeedOptions extends DemoOptions {
  region: string;
  authUrl: string;
  baseUrl: string;
  /** Called after each brand's records are loaded. */
  onProgress?: (message: string) => void;
}

/**
 * Whether `store` may be (re-)seeded by {@link seedDemoRegion}: it is empty, or it holds exactly
 * the demo's brands and apps (a previous demo's seed), and nothing an operator created.
 */
export async function holdsOnlyTheDemo(
  store: Pick<BrandDirectory, "listBrands" | "listApps">,
): Promise<boolean> {
  const plan = planDemo({ today: "2000-01-01", days: 1 });
  const sameIds = (stored: string[], planned: string[]) =>
    stored.length === 0 || stored.sort().join() === planned.sort().join();
  return (
    sameIds(
      (await store.listBrands()).map((brand) => brand.brandId),
      plan.brands.map((brand) => brand.brandId),
    ) &&
    sameIds(
      (await store.listApps()).map((app) => app.appClientId),
      plan.brands.flatMap((brand) => brand.apps.map((app) => app.appClientId)),
    )
  );
}

/**
 * Seeds `store` (empty, or holding a previous demo's seed: see {@link holdsOnlyTheDemo}). A
 * previous seed is refreshed in place: its apps get new secrets (the old ones stop working), its
 * grants are the demo's again, the records of the requested days are replaced and today is
 * published. Returns the credentials of every demo app.
 */
export async function seedDemoRegion(
  store: BrandDirectory & RecordLoads,
  options: DemoSeedOptions,
): Promise<DemoCredentials> {
  const plan = planDemo(options);
  const now = new Date();
  const credentials: DemoCredentials = {
    region: options.region,
    authUrl: options.authUrl,
    baseUrl: options.baseUrl,
    apps: [],
  };
  await store.upsertFxRates(plan.fxRates);
  for (const brand of plan.brands) {
    if ((await store.findBrand(brand.brandId)) === undefined) {
      await store.createBrand({ brandId: brand.brandId, name: brand.name, createdAt: now });
    } else {
      await store.removeGrants(brand.brandId, await store.brandGrants(brand.brandId));
    }
    await store.addGrants(brand.brandId, brand.grants);
    for (const app of brand.apps) {
      const secret = generateAppSecret();
      const stored = {
        appClientId: app.appClientId,
        brandId: brand.brandId,
        name: app.name,
        secretHash: hashAppSecret(secret),
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        markets: app.markets,
        dataSources: app.dataSources,
        revokedAt: null,
        createdAt: now,
      };
      const previous = await store.findApp(app.appClientId);
      if (previous === undefined) await store.createApp(stored);
      else await store.updateApp({ ...stored, createdAt: previous.createdAt });
      credentials.apps.push({
        name: app.name,
        appClientId: app.appClientId,
        appClientSecret: secret,
        brandClientId: brand.brandId,
        markets: brand.grants.markets
          .filter((market) => app.markets === null || app.markets.includes(market))
          .sort(),
        dataSources: brand.grants.dataSources
          .filter((source) => app.dataSources === null || app.dataSources.includes(source))
          .sort(),
      });
    }
    const loaded = await store.replaceRecords(brand.brandId, demoRecords(plan, brand, options), {
      processingDate: options.today,
      source: "mdq demo",
    });
    options.onProgress?.(
      `${brand.brandId}: ${loaded.rows} records (${demoRecordCount(plan, brand, options)} planned)`,
    );
    await store.publish(brand.brandId, options.today, now);
  }
  return credentials;
}
