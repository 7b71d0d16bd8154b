/**
 * `mdq demo`: seed a deterministic demo region into a fresh data directory and serve it; print
 * and write the credentials JSON (CONTRACT §4) and a curl walk-through of the daily flow.
 */
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import {
  addDays,
  buildService,
  CONFIG_ENV,
  type DemoCredentials,
  holdsOnlyTheDemo,
  loadConfig,
  migrateDatabase,
  openStore,
  type ServiceConfig,
  type Store,
  seedDemoRegion,
  todayIn,
} from "@mdq/server";
import { Command } from "commander";
import { demoDataDirectory } from "../operator-options.js";
import {
  ADMIN_PORT_HELP,
  checkListenerPorts,
  closingStoreOnFailure,
  runService,
  serviceParts,
} from "../run-service.js";
import { threadPoolProblem } from "../thread-pool.cjs";
import { UsageError } from "../usage-error.js";

/**
 * File that marks a directory as a demo's, so that `mdq demo` may wipe it. It holds the process
 * id of the demo that seeded it, so that a second demo does not wipe the first one's data (and
 * rewrite its credentials) while it runs.
 */
const DEMO_MARKER = ".mdq-demo";

/** The process id in the marker of `dataDir`, if that process is still running. */
async function runningDemo(dataDir: string): Promise<number | undefined> {
  let pid: unknown;
  try {
    pid = (JSON.parse(await readFile(join(dataDir, DEMO_MARKER), "utf8")) as { pid?: unknown }).pid;
  } catch {
    return undefined; // no marker, or one written before markers held a process id
  }
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid)
    return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}

async function freshDemoDirectory(dataDir: string): Promise<void> {
  if (existsSync(dataDir)) {
    const entries = await readdir(dataDir);
    if (entries.length > 0 && !entries.includes(DEMO_MARKER)) {
      throw new UsageError(`${dataDir} is not empty and is not a demo data directory; choose another --data`);
    }
    const pid = await runningDemo(dataDir);
    if (pid !== undefined) {
      throw new UsageError(
        `${dataDir} is in use by the demo running as process ${pid}; stop it first, or give this demo ` +
          "its own --data and --credentials",
      );
    }
    await rm(dataDir, { recursive: true, force: true });
  }
  await mkdir(dataDir, { recursive: true });
  const marker = {
    seededBy: "mdq demo",
    pid: process.pid,
    note: "wiped by the next mdq demo once this one stops",
  };
  await writeFile(join(dataDir, DEMO_MARKER), `${JSON.stringify(marker)}\n`);
}

function positiveInteger(name: string) {
  return (text: string) => {
    if (!/^[1-9]\d*$/.test(text))
      throw new UsageError(`${name} must be a whole number ≥ 1; got ${JSON.stringify(text)}`);
    return Number(text);
  };
}

/**
 * The walk-through's filter of the token endpoint's answer: the access token, or the answer on
 * stderr and exit 1, so that a wrong secret does not become \`TOKEN=undefined\` and a puzzling 401.
 */
const TOKEN_FROM_ANSWER =
  `node -e 'const t = require("fs").readFileSync(0, "utf8"); let a = {}; try { a = JSON.parse(t) } catch {}; ` +
  `if (!a.access_token) { console.error("no token: " + (t || "no answer")); process.exit(1) }; console.log(a.access_token)'`;

/** What the walk-through asks about: the demo's address, its credentials file and a range. */
export interface WalkThroughOptions {
  /** The public base URL, e.g. `http://localhost:4000`: the one line a reader changes. */
  base: string;
  /** The credentials file as the reader's shell finds it (`./demo-credentials.json`). */
  credentialsFile: string;
  appClientId: string;
  brandClientId: string;
  from: string;
  to: string;
}

/**
 * The curl walk-through of the daily flow, as a shell block that runs as pasted: `BASE` set once
 * and used by every request; token, readiness, a records page, totals, a bulk export. The README
 * holds this block for port 4000 and October 2026 (a test compares them), and `mdq demo` prints
 * it with its own address and the last 28 days.
 */
export function walkThrough(options: WalkThroughOptions): string {
  const { base, credentialsFile, appClientId, brandClientId, from, to } = options;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, printed as it is
  const bearer = '-H "Authorization: Bearer ${TOKEN:?no token, see above}"';
  const graphql = `curl -s -w '\\n' "$BASE/graphql" ${bearer} -H 'Content-Type: application/json'`;
  const range = `"r":{"from":"${from}","to":"${to}"}`;
  return `BASE=${base}
export MDQ_APP_CLIENT_ID=${appClientId} MDQ_BRAND_CLIENT_ID=${brandClientId}
export MDQ_APP_CLIENT_SECRET=$(node -p 'require("${credentialsFile}").apps[0].appClientSecret')

# 1. Get a token: HTTP Basic (read by curl from stdin, never on a command line), scope api_data/read.
#    Valid 3600 s; cache it until then. A refusal is printed, and the steps below stop.
TOKEN=$(printf 'user = "%s:%s"\\n' "$MDQ_APP_CLIENT_ID" "$MDQ_APP_CLIENT_SECRET" \\
  | curl -sS -K - -d grant_type=client_credentials -d scope=api_data/read "$BASE/oauth2/token" \\
  | ${TOKEN_FROM_ANSWER})

# 2. Is today's data ready? (NOT_READY: wait a few minutes and ask again.)
${graphql} \\
  -d '{"query":"query($c: ID!) { marketingDataReadiness(clientId: $c) { status date lastProcessedAt availableThrough } }","variables":{"c":"'$MDQ_BRAND_CLIENT_ID'"}}'

# 3. Records, a page at a time (pageSize 1000-5000), in any currency of the Currency enum.
${graphql} \\
  -d '{"query":"query($c: ID!, $r: DateRangeInput!, $p: Int!) { marketingRecords(clientId: $c, dateRange: $r, currency: GBP, pagination: {page: $p, pageSize: 1000}) { recordId date market dataSource channel campaignId campaignName impressions clicks spend conversions revenue currency } }","variables":{"c":"'$MDQ_BRAND_CLIENT_ID'",${range},"p":1}}'

# 4. Or totals: the metrics you select as TOTAL_ fields, grouped as you like.
${graphql} \\
  -d '{"query":"query($c: ID!, $r: DateRangeInput!) { marketingAggregate(clientId: $c, dateRange: $r, metrics: [SPEND, REVENUE], groupBy: [DATE_WEEK, MARKET], sort: [{field: TOTAL_SPEND, direction: DESC}]) { DATE_WEEK MARKET TOTAL_SPEND TOTAL_REVENUE currency } }","variables":{"c":"'$MDQ_BRAND_CLIENT_ID'",${range}}}'

# 5. Or a whole range (up to 366 days) in one streamed request: NDJSON (default), CSV, Parquet or Arrow.
#    MDQ-Row-Count says how many rows follow; MDQ-Resume resumes a broken download (docs/api.md §8).
curl -sS --fail --compressed -D headers.txt -o records.ndjson ${bearer} \\
  "$BASE/export/marketing-records?clientId=$MDQ_BRAND_CLIENT_ID&from=${from}&to=${to}&currency=GBP"
grep -i '^mdq-row-count' headers.txt; wc -l < records.ndjson
`;
}

/** Where the demo's request logs go, in its data directory. */
const DEMO_LOG = "mdq.log";

/** What the demo prints once it serves: where everything is, then the walk-through. */
function demoGuide(
  credentials: DemoCredentials,
  where: { credentialsFile: string; logFile: string; adminAddress: string; from: string; to: string },
): string {
  const app = credentials.apps[0]!;
  return `
MDQ demo region "${credentials.region}" is up: token endpoint ${credentials.authUrl}/oauth2/token, GraphQL ${credentials.baseUrl}/graphql
Credentials for ${credentials.apps.length} apps are in ${where.credentialsFile} (secrets are shown only there).
Request logs go to ${where.logFile}; the admin listener (for mdq status, mdq load, ...) is ${where.adminAddress}.
GraphiQL explorer: open ${credentials.baseUrl}/graphql in a browser and paste a token (step 1 below).

Walk the daily flow with curl: paste this block into a shell.

${walkThrough({
  base: credentials.baseUrl,
  credentialsFile: where.credentialsFile,
  appClientId: app.appClientId,
  brandClientId: app.brandClientId,
  from: where.from,
  to: where.to,
})}`;
}

/** `file` as a shell in `cwd` finds it: `./name` inside `cwd`, else its absolute path. */
function shellPath(file: string, cwd: string): string {
  const inside = relative(cwd, file);
  return inside.startsWith("..") || isAbsolute(inside) ? file : `./${inside}`;
}

/**
 * The demo's store: a fresh DuckDB file in the (wiped) demo directory, or, with MDQ_DATABASE_URL,
 * the PostgreSQL database, migrated here for convenience. A database is never wiped: it must be
 * empty or hold only a previous demo's seed, which is then refreshed (`holdsOnlyTheDemo`).
 */
async function openDemoStore(config: ServiceConfig): Promise<Store> {
  if (config.databaseUrl !== null) await migrateDatabase(config.databaseUrl);
  const store = await openStore(config);
  if (!(await closingStoreOnFailure(store, () => holdsOnlyTheDemo(store)))) {
    await store.close();
    throw new UsageError(
      "mdq demo seeds an empty database or re-seeds its own, and MDQ_DATABASE_URL holds other brands or apps: point it at a new database",
    );
  }
  return store;
}

export function demoCommand(): Command {
  return new Command("demo")
    .description(
      "Seed a deterministic demo region (3 brands, 400 days, FX rates, today's publish) and serve it, with the GraphiQL explorer at GET /graphql (MDQ_EXPLORER=off turns it off).",
    )
    .option("--port <port>", "port to listen on", "4000")
    .option("--admin-port <port>", ADMIN_PORT_HELP)
    .option("--region <code>", "region code", "uk")
    .option(
      "--data <dir>",
      "demo data directory (wiped and re-seeded at each start; default ./data/demo-<region>)",
    )
    .option("--credentials <file>", "where to write the credentials JSON", "demo-credentials.json")
    .option("--scale <n>", "multiply the campaigns (50 ≈ 2 million rows)", positiveInteger("--scale"), 1)
    .option("--days <n>", "days of data ending yesterday", positiveInteger("--days"), 400)
    .option("--seed-only", "seed the data directory and exit without serving")
    .addHelpText(
      "after",
      "\nExamples:\n  mdq demo --port 4000 --credentials ./demo-credentials.json\n" +
        "  MDQ_DATABASE_URL=postgres://127.0.0.1:5432/mdq_demo mdq demo   # seeds PostgreSQL (empty, or a previous demo's)\n",
    )
    .action(
      async (flags: {
        port: string;
        adminPort?: string;
        region: string;
        data?: string;
        credentials: string;
        scale: number;
        days: number;
        seedOnly?: boolean;
      }) => {
        const dataDir = resolve(flags.data ?? demoDataDirectory(flags.region));
        // The explorer is on in the demo unless MDQ_EXPLORER says otherwise.
        const explorer = process.env[CONFIG_ENV.explorer] || "on";
        const config = loadConfig(process.env, {
          port: flags.port,
          adminPort: flags.adminPort,
          region: flags.region,
          dataDir,
          explorer,
        });
        // Refused before seeding, not after: a demo that would serve needs the pool of `mdq serve`
        // and both of its ports.
        const threadPool = flags.seedOnly ? null : threadPoolProblem(config.exportConcurrency, process.env);
        if (threadPool !== null) throw new UsageError(threadPool);
        if (!flags.seedOnly) await checkListenerPorts(config);
        await freshDemoDirectory(dataDir);
        const store = await openDemoStore(config);
        const today = todayIn(config.timeZone);
        const credentialsFile = resolve(flags.credentials);
        const started = Date.now();
        const credentials = await closingStoreOnFailure(store, async () => {
          const seeded = await seedDemoRegion(store, {
            region: config.region,
            authUrl: config.authUrl,
            baseUrl: config.baseUrl,
            today,
            days: flags.days,
            scale: flags.scale,
            onProgress: (message) => process.stderr.write(`mdq demo: ${message}\n`),
          });
          await writeFile(credentialsFile, `${JSON.stringify(seeded, null, 2)}\n`, { mode: 0o600 });
          return seeded;
        });
        process.stderr.write(`mdq demo: seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
        if (flags.seedOnly) {
          await store.close();
          return;
        }
        // The request logs go to a file, so that the terminal shows the walk-through.
        const logFile = join(dataDir, DEMO_LOG);
        const logStream = createWriteStream(logFile, { flags: "a" });
        await closingStoreOnFailure(store, async () =>
          runService(
            await buildService(config, {
              ...serviceParts(store, logStream),
              explorerClientId: credentials.apps[0]!.brandClientId,
            }),
          ),
        );
        process.stdout.write(
          demoGuide(credentials, {
            credentialsFile: shellPath(credentialsFile, process.cwd()),
            logFile,
            adminAddress: `http://${config.adminHost}:${config.adminPort}`,
            from: addDays(today, -28),
            to: addDays(today, -1),
          }),
        );
      },
    );
}
