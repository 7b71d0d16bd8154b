/**
 * The reason codec of a scope change: what `scope_versions.reason` holds (the change as JSON,
 * written by writes/version-stamps.ts) and the sentence a caller reads (reads/versions).
 */
import type { Grants } from "../model/store.js";

/**
 * What `scope_versions.reason` holds: the change as JSON, not as a sentence, because the sentence a
 * caller reads names only the markets and data sources inside that caller's scope
 * (`reasonFor`): an app narrowed to GB must not learn that the brand was granted DE.
 */
type ScopeChange =
  | { kind: "grants"; change: "add" | "remove"; markets: string[]; dataSources: string[] }
  | { kind: "narrowing"; appClientId: string };

/** The stored reason of a grant change. */
export function grantChangeReason(change: "add" | "remove", grants: Partial<Grants>): string {
  const stored: ScopeChange = {
    kind: "grants",
    change,
    markets: [...(grants.markets ?? [])],
    dataSources: [...(grants.dataSources ?? [])],
  };
  return JSON.stringify(stored);
}

/** The stored reason of a change of an app's narrowing. */
export function narrowingChangeReason(appClientId: string): string {
  return JSON.stringify({ kind: "narrowing", appClientId } satisfies ScopeChange);
}

/**
 * The sentence a caller reads for a stored reason: a grant added names only the markets and data
 * sources the caller may now read; a grant removed names none (the caller may never have seen
 * them); a reason stored before reasons were JSON names none either.
 */
export function reasonFor(stored: string, grants: Grants): string {
  let change: ScopeChange | undefined;
  try {
    change = JSON.parse(stored) as ScopeChange;
  } catch {
    change = undefined;
  }
  if (change?.kind === "narrowing") {
    return `the markets or data sources app ${change.appClientId} is narrowed to changed`;
  }
  if (change?.kind !== "grants") return "the brand's grants changed";
  if (change.change === "remove") return "the brand's grants changed: removed markets or data sources";
  const markets = change.markets.filter((market) => grants.markets.includes(market));
  const dataSources = change.dataSources.filter((source) => grants.dataSources.includes(source));
  const named = [
    markets.length > 0 ? `markets ${markets.join(", ")}` : null,
    dataSources.length > 0 ? `data sources ${dataSources.join(", ")}` : null,
  ].filter((part) => part !== null);
  return named.length > 0
    ? `the brand's grants changed: added ${named.join(" and ")}`
    : "the brand's grants changed";
}
