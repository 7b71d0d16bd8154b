// `npm run bench -- [flags]`: the flags, their defaults, and their checks (once, at start).
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { CONTENDERS } from "./contenders.mjs";
import { DEFAULT_SCENARIOS, SCENARIOS } from "./scenarios.mjs";

export const USAGE = `npm run bench -- [flags]     (or: node bench/run.mjs [flags] after npm run build
                                 and npm install --prefix bench)

  --scale N          demo data scale (default 30: ≈ 1.27 M rows, 56,700 in the 90-day range, so page 50 exists)
  --days N           demo data days ending yesterday (default 400)
  --duration S       seconds measured per contender per round (default 4)
  --warmup S         seconds of the same load before each measured window (default 2)
  --rounds N         rounds; contenders alternate within each round (default 2); medians reported
  --connections N    concurrent connections of the load generator (default 20)
  --walk-clients N   concurrent clients of the cold walk, each walking its own query (default 8)
  --page-sizes L     page sizes of the cold walk (default 1000,5000)
  --scenarios a,b    among ${Object.keys(SCENARIOS).join(", ")} (default: all)
  --contenders x,y   among ${Object.keys(CONTENDERS).join(", ")} (default: all;
                     mdq-duckdb always runs: it is the reference every answer is checked against)
  --soak M           also M minutes of mixed daily-sync traffic per MDQ store (RSS, p99 per minute)
  --growth           also measure page latency against rows in the store and page number, then
                     run the growth bench (bench/scale.mjs: first answers per scale, both stores; slow)
  --growth-sizes L   millions of rows for --growth (default 1,10,50)
  --growth-scales L  demo scales of bench/scale.mjs under --growth (default 1,30,150,600)
  --postgres-url U   server holding the bench database (default postgres://root@127.0.0.1:5432/postgres)
  --save             write the committed bench/results/latest.json and latest.svg
                     (default: bench/results/local/, which git ignores)
  --out DIR          where latest.json / latest.svg go instead (overrides --save)
  --keep             keep the work directory (data copies, contender logs)
  --profile DIR      run every MDQ contender with node --cpu-prof, its .cpuprofile written to DIR
`;

/** `text` as a number > 0 (whole unless `integer` is false); throws naming `--name`. */
export function positive(name, text, { integer = true } = {}) {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name} must be a ${integer ? "whole " : ""}number > 0; got ${JSON.stringify(text)}`);
  }
  return value;
}

function nonNegative(name, text) {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < 0)
    throw new Error(`--${name} must be a number ≥ 0; got ${JSON.stringify(text)}`);
  return value;
}

/** `text` as a comma-separated list of names among `known`; throws naming `--name`. */
export function list(name, text, known) {
  const names = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const unknown = names.filter((entry) => !known.includes(entry));
  if (unknown.length > 0 || names.length === 0)
    throw new Error(
      `--${name}: unknown ${unknown.join(", ") || "(empty list)"}; choose among ${known.join(", ")}`,
    );
  return names;
}

/**
 * Where a run writes: an everyday run must not overwrite the committed figures, so only `--save`
 * (a run meant for the README) writes bench/results itself.
 */
export function resultsDirectory(save) {
  return new URL(save ? "../results" : "../results/local", import.meta.url).pathname;
}

/**
 * The flags of every bench run that seeds PostgreSQL and writes results (run.mjs, scale.mjs): the
 * server, `--save` and `--out` (resultsDirectory), and `--keep` (keep what it seeded).
 */
export const RUN_FLAGS = Object.freeze({
  "postgres-url": { type: "string", default: "postgres://root@127.0.0.1:5432/postgres" },
  save: { type: "boolean", default: false },
  out: { type: "string" },
  keep: { type: "boolean", default: false },
});

/** The run's options from argv, checked; throws with the flag named. */
export function readOptions(argv = process.argv.slice(2)) {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: "string", default: "30" },
      days: { type: "string", default: "400" },
      duration: { type: "string", default: "4" },
      warmup: { type: "string", default: "2" },
      rounds: { type: "string", default: "2" },
      connections: { type: "string", default: "20" },
      "walk-clients": { type: "string", default: "8" },
      "page-sizes": { type: "string", default: "1000,5000" },
      scenarios: { type: "string" },
      contenders: { type: "string" },
      growth: { type: "boolean", default: false },
      soak: { type: "string", default: "0" },
      "growth-sizes": { type: "string", default: "1,10,50" },
      "growth-scales": { type: "string", default: "1,30,150,600" },
      ...RUN_FLAGS,
      profile: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  const contenders = values.contenders
    ? list("contenders", values.contenders, Object.keys(CONTENDERS))
    : Object.keys(CONTENDERS);
  if (!contenders.includes("mdq-duckdb")) contenders.unshift("mdq-duckdb");
  return Object.freeze({
    help: values.help,
    scale: positive("scale", values.scale),
    days: positive("days", values.days),
    duration: positive("duration", values.duration, { integer: false }),
    warmup: nonNegative("warmup", values.warmup),
    rounds: positive("rounds", values.rounds),
    connections: positive("connections", values.connections),
    walkClients: positive("walk-clients", values["walk-clients"]),
    pageSizes: values["page-sizes"].split(",").map((size) => positive("page-sizes", size)),
    scenarios: values.scenarios
      ? list("scenarios", values.scenarios, Object.keys(SCENARIOS))
      : DEFAULT_SCENARIOS,
    contenders,
    growth: values.growth,
    soak: nonNegative("soak", values.soak),
    growthSizes: values["growth-sizes"]
      .split(",")
      .map((size) => positive("growth-sizes", size, { integer: false }) * 1e6),
    growthScales: values["growth-scales"].split(",").map((scale) => positive("growth-scales", scale)),
    postgresUrl: values["postgres-url"],
    out: values.out ?? resultsDirectory(values.save),
    keep: values.keep,
    profile: values.profile === undefined ? undefined : resolve(values.profile),
  });
}
