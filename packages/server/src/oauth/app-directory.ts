/**
 * Apps and their effective grants as the request path sees them, cached for a short, bounded
 * time so that a revocation or a grant change reaches every request within `ttlSeconds`
 * (CONTRACT §2 asks for 60 s at most).
 */
import type { App, BrandDirectory, Grants } from "../store/store.js";

interface Entry<Value> {
  value: Value;
  expiresAt: number;
}

/** Cached lookups of apps and of what each may read. */
export class AppDirectory {
  private readonly apps = new Map<string, Entry<App | undefined>>();
  private readonly grants = new Map<string, Entry<Grants>>();

  constructor(
    private readonly store: Pick<BrandDirectory, "findApp" | "brandGrants">,
    private readonly ttlSeconds: number,
  ) {}

  /** The app, or undefined when unknown. */
  async app(appClientId: string): Promise<App | undefined> {
    return this.cached(this.apps, appClientId, () => this.store.findApp(appClientId));
  }

  /** The app's effective grants: its brand's grants, narrowed by the app's own lists. */
  async effectiveGrants(app: App): Promise<Grants> {
    return this.cached(this.grants, app.appClientId, async () => {
      const brand = await this.store.brandGrants(app.brandId);
      return {
        markets: narrow(brand.markets, app.markets),
        dataSources: narrow(brand.dataSources, app.dataSources),
      };
    });
  }

  /** Forgets everything cached, so that the next request sees the store's current state. */
  clear(): void {
    this.apps.clear();
    this.grants.clear();
  }

  private async cached<Value>(
    map: Map<string, Entry<Value>>,
    key: string,
    load: () => Promise<Value>,
  ): Promise<Value> {
    const now = Date.now();
    const hit = map.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = await load();
    if (this.ttlSeconds > 0) {
      if (map.size > 10_000) map.clear();
      map.set(key, { value, expiresAt: now + this.ttlSeconds * 1000 });
    }
    return value;
  }
}

function narrow(granted: string[], narrowing: string[] | null): string[] {
  const result = narrowing === null ? granted : granted.filter((value) => narrowing.includes(value));
  return [...result].sort();
}
