/**
 * The app cache of the request path (oauth/app-directory.ts): within its TTL an app is read from
 * the store once, `clear()` forgets it, a TTL of 0 caches nothing, and a full cache drops only the
 * least recently used apps.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppDirectory } from "../src/oauth/app-directory.js";
import type { App, Store } from "../src/store/model/store.js";

/** A store that knows one app, "known", and counts how often each app is looked up. */
function countingStore(): { store: Store; lookups: Map<string, number> } {
  const lookups = new Map<string, number>();
  const known = { appClientId: "known", brandId: "brand-a" } as App;
  const store = {
    findApp: async (appClientId: string) => {
      lookups.set(appClientId, (lookups.get(appClientId) ?? 0) + 1);
      return appClientId === known.appClientId ? known : undefined;
    },
  } as unknown as Store;
  return { store, lookups };
}

describe("AppDirectory", () => {
  it("reads an app (or its absence) from the store once within the TTL, and again after clear()", async () => {
    const { store, lookups } = countingStore();
    const apps = new AppDirectory(store, 60);
    assert.equal((await apps.app("known"))?.brandId, "brand-a");
    assert.equal((await apps.app("known"))?.brandId, "brand-a");
    assert.equal(await apps.app("unknown"), undefined);
    assert.equal(await apps.app("unknown"), undefined);
    assert.deepEqual(Object.fromEntries(lookups), { known: 1, unknown: 1 });
    apps.clear();
    await apps.app("known");
    assert.equal(lookups.get("known"), 2);
  });

  it("with a TTL of 0 asks the store on every lookup", async () => {
    const { store, lookups } = countingStore();
    const apps = new AppDirectory(store, 0);
    await apps.app("known");
    await apps.app("known");
    assert.equal(lookups.get("known"), 2);
  });

  it("keeps a recently used app when 10,000 others fill the cache", async () => {
    const { store, lookups } = countingStore();
    const apps = new AppDirectory(store, 60);
    for (let index = 0; index < 10_000; index += 1) await apps.app(`app_${index}`);
    await apps.app("known");
    for (let index = 10_000; index < 10_010; index += 1) await apps.app(`app_${index}`);
    await apps.app("known");
    assert.equal(lookups.get("known"), 1);
    // The least recently used went first.
    await apps.app("app_0");
    assert.equal(lookups.get("app_0"), 2);
  });
});
