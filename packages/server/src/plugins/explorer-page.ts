/**
 * The HTML of the GraphiQL explorer (plugins/graphql-explorer.ts) and its preloaded tabs: the daily
 * flow of docs/api.md §3 (readiness, a page of records, an aggregate) for one brand, over the last
 * 28 days of the region's calendar.
 */
import { addDays } from "../calendar.js";

/** One preloaded GraphiQL tab. */
export interface ExplorerTab {
  query: string;
  variables: string;
}

/** Placeholder brand of the example tabs when the service does not name one (`mdq serve`). */
export const EXAMPLE_BRAND_PLACEHOLDER = "your-brand-client-id";

/**
 * The daily flow as GraphiQL tabs, for `clientId` and the 28 days before `today`.
 * @example dailyFlowTabs("brand-acme", "2026-11-23")[0].query // the readiness query
 */
export function dailyFlowTabs(clientId: string, today: string): ExplorerTab[] {
  const dateRange = { from: addDays(today, -28), to: addDays(today, -1) };
  const variables = (values: Record<string, unknown>) => JSON.stringify(values, null, 2);
  return [
    {
      query: `# 1. Is today's data ready? Paste a bearer token above (POST /oauth2/token), then run.
query Readiness($clientId: ID!) {
  marketingDataReadiness(clientId: $clientId) {
    status
    date
    lastProcessedAt
    availableThrough
  }
}
`,
      variables: variables({ clientId }),
    },
    {
      query: `# 2. When READY: download records a page at a time (extensions.pageInfo tells hasNextPage).
query Records($clientId: ID!, $dateRange: DateRangeInput!, $page: Int!) {
  marketingRecords(clientId: $clientId, dateRange: $dateRange, currency: GBP, pagination: {page: $page, pageSize: 1000}) {
    recordId
    date
    market
    dataSource
    channel
    campaignName
    impressions
    clicks
    spend
    conversions
    revenue
    currency
  }
}
`,
      variables: variables({ clientId, dateRange, page: 1 }),
    },
    {
      query: `# 3. Or totals: the metrics you select as TOTAL_ fields, grouped as you like.
query Totals($clientId: ID!, $dateRange: DateRangeInput!) {
  marketingAggregate(clientId: $clientId, dateRange: $dateRange, metrics: [SPEND, CLICKS], groupBy: [MARKET]) {
    MARKET
    TOTAL_SPEND
    TOTAL_CLICKS
    currency
  }
}
`,
      variables: variables({ clientId, dateRange }),
    },
  ];
}

/** What the page needs: its title's region, the asset addresses, the tabs. */
export interface ExplorerPageOptions {
  region: string;
  /** Address of each asset relative to the page (`graphql/explorer/<version>/<name>`). */
  assetUrl: (name: string) => string;
  tabs: ExplorerTab[];
}

/** JSON safe inside a `<script>` element: no `<` can close it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll("<", "\\u003c");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The explorer page: no inline script or style, so the Content-Security-Policy can forbid both. */
export function explorerPage(options: ExplorerPageOptions): string {
  const asset = (name: string) => escapeHtml(options.assetUrl(name));
  // Classic UMD scripts setting globals, then the explorer as a module: both kinds run in order.
  const umdScripts = ["react.production.min.js", "react-dom.production.min.js", "graphiql.min.js"];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>MDQ explorer · region ${escapeHtml(options.region)}</title>
<link rel="stylesheet" href="${asset("graphiql.min.css")}">
<link rel="stylesheet" href="${asset("explorer.css")}">
<script type="application/json" id="mdq-explorer-settings">${scriptJson({ tabs: options.tabs })}</script>
${umdScripts.map((name) => `<script defer src="${asset(name)}"></script>`).join("\n")}
<script type="module" src="${asset("explorer.js")}"></script>
</head>
<body>
<form id="mdq-token-form" class="mdq-token-bar" autocomplete="off">
  <label for="mdq-token">Bearer token</label>
  <input id="mdq-token" name="token" type="password" spellcheck="false" placeholder="paste the access_token of POST /oauth2/token">
  <button type="submit">Use token</button>
  <span class="mdq-token-hint">sent as <code>Authorization: Bearer …</code> with every query; never stored</span>
</form>
<main id="mdq-explorer"></main>
</body>
</html>
`;
}
