/**
 * What the demo generator put in a test region, for tests that check answers against it: the
 * plan and every stored record of each brand (granted or not), and a token of every app.
 */
import type { TestRegion } from "@mdq/test-support";
import { type DemoPlan, demoRecords, planDemo } from "../src/demo/demo-data.js";
import type { StoredRecord } from "../src/store/model/store.js";

/** The plan `region` was seeded from (`days` data days ending yesterday) and each brand's stored records. */
export function seededDemo(
  region: TestRegion,
  days: number,
): { plan: DemoPlan; stored: Map<string, StoredRecord[]> } {
  const options = { today: region.today, days };
  const plan = planDemo(options);
  const stored = new Map<string, StoredRecord[]>();
  for (const brand of plan.brands) stored.set(brand.brandId, [...demoRecords(plan, brand, options)]);
  return { plan, stored };
}

/** A fresh access token of every demo app of `region`, by appClientId. */
export async function appTokens(region: TestRegion): Promise<Map<string, string>> {
  const tokens = new Map<string, string>();
  for (const app of region.credentials.apps) tokens.set(app.appClientId, await region.token(app.appClientId));
  return tokens;
}
