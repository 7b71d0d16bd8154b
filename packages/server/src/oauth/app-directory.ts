/**
 * Apps and their effective grants as the request path sees them, cached for a short, bounded
 * time so that a revocation or a grant change reaches every request within `ttlSeconds`
 * (CONTRACT §2 asks for 60 s at most).
 */
import { LRUCache } from "lru-cache";
import type { App, BrandDirectory, Grants } from "../store/model/store.js";

/** Apps (and grant sets) kept at most; the least recently used go first. */
const MAX_CACHED = 10_000;

/** A cached lookup; boxed because an unknown app (undefined) is worth caching too. */
interface Cached<Value> {
  value: Value;
}

/** Cached lookups of apps and of what each may read. */
export class AppDirectory {
  private readonly apps: LRUCache<string, Cached<App | undefined>> | undefined;
  private readonly grants: LRUCache<string, Cached<Grants>> | undefined;

  constructor(
    private readonly store: Pick<BrandDirectory, "findApp" | "brandGrants">,
    ttlSeconds: number,
  ) {
    // A TTL of 0 means "do not cache": lru-cache would read it as "never expires".
    if (ttlSeconds > 0) {
      const options = { max: MAX_CACHED, ttl: ttlSeconds * 1000 };
      this.apps = new LRUCache(options);
      this.grants = new LRUCache(options);
    }
  }

  /** The app, or undefined when unknown. */
  async app(appClientId: string): Promise<App | undefined> {
    return cached(this.apps, appClientId, () => this.store.findApp(appClientId));
  }

  /** The app's effective grants: its brand's grants, narrowed by the app's own lists. */
  async effectiveGrants(app: App): Promise<Grants> {
    return cached(this.grants, app.appClientId, async () => {
      const brand = await this.store.brandGrants(app.brandId);
      return {
        markets: narrow(brand.markets, app.markets),
        dataSources: narrow(brand.dataSources, app.dataSources),
      };
    });
  }

  /** Forgets everything cached, so that the next request sees the store's current state. */
  clear(): void {
    this.apps?.clear();
    this.grants?.clear();
  }
}

async function cached<Value>(
  cache: LRUCache<string, Cached<Value>> | undefined,
  key: string,
  load: () => Promise<Value>,
): Promise<Value> {
  const hit = cache?.get(key);
  if (hit) return hit.value;
  const value = await load();
  cache?.set(key, { value });
  return value;
}

function narrow(granted: string[], narrowing: string[] | null): string[] {
  const result = narrowing === null ? granted : granted.filter((value) => narrowing.includes(value));
  return [...result].sort();
}
