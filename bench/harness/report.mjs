// The results table (median over rounds, ratio against each scenario's baseline) and the issue's
// targets, each evaluated as MET or MISSED with the ratio measured in the same run.

const fixed = (value, digits) => (value === undefined || value === null ? "–" : value.toFixed(digits));

/** A markdown table of every measured (scenario, contender), with ratios to the baseline. */
export function resultsTable(results, labels) {
  const lines = [
    "| scenario | contender | req/s | p50 ms | p99 ms | req/s vs baseline | p99 vs baseline | checked before timing; notes |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const scenario of results.scenarios.filter((entry) => entry.kind !== "walk")) {
    const baseline = scenario.results.find((result) => result.contender === scenario.baseline);
    for (const result of scenario.results) {
      const isBaseline = result.contender === scenario.baseline;
      const versus = (metric) => {
        if (isBaseline) return "baseline";
        if (!baseline || !(baseline[metric] > 0) || !(result[metric] > 0)) return "–";
        return `${fixed(result[metric] / baseline[metric], 2)}×`;
      };
      const rpsRatio = versus("rps");
      const p99Ratio = versus("p99");
      lines.push(
        `| ${scenario.title} | ${labels[result.contender] ?? result.contender} | ${fixed(result.rps, 1)} | ${fixed(result.p50, 1)} | ${fixed(result.p99, 1)} | ${rpsRatio} | ${p99Ratio} | ${result.verified ?? ""} |`,
      );
    }
    for (const skipped of scenario.skipped) {
      lines.push(
        `| ${scenario.title} | ${labels[skipped.contender] ?? skipped.contender} | skipped: ${skipped.reason} | | | | | |`,
      );
    }
  }
  return lines.join("\n");
}

/**
 * The cold walks as a markdown table: rows/s and pages/s over the wall time of W concurrent walks,
 * p50/p99 per page, the ratio to the in-memory limit, and last pages against first pages.
 */
export function walkTable(results, labels) {
  const walks = results.scenarios.filter((entry) => entry.kind === "walk");
  if (walks.length === 0) return "";
  const lines = [
    "| cold walk | contender | rows/s | pages/s | p50 ms/page | p99 ms/page | rows/s vs in-memory limit | last pages vs first | checked before timing; notes |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const walk of walks) {
    const baseline = walk.results.find((result) => result.contender === walk.baseline);
    for (const result of walk.results) {
      const versus =
        result.contender === walk.baseline
          ? "baseline"
          : baseline?.rowsPerSecond > 0
            ? `${fixed(result.rowsPerSecond / baseline.rowsPerSecond, 3)}×`
            : "–";
      lines.push(
        `| ${walk.pageSize} rows/page | ${labels[result.contender] ?? result.contender} | ${Math.round(result.rowsPerSecond).toLocaleString("en")} | ${fixed(result.pagesPerSecond, 1)} | ${fixed(result.p50, 1)} | ${fixed(result.p99, 1)} | ${versus} | ${result.lastVsFirst === null ? "–" : `${fixed(result.lastVsFirst, 2)}×`} | ${result.verified ?? ""} |`,
      );
    }
    for (const skipped of walk.skipped)
      lines.push(
        `| ${walk.pageSize} rows/page | ${labels[skipped.contender] ?? skipped.contender} | skipped: ${skipped.reason} | | | | | | |`,
      );
  }
  return lines.join("\n");
}

function find(results, scenario, contender) {
  return results.scenarios
    .find((entry) => entry.id === scenario)
    ?.results.find((entry) => entry.contender === contender);
}

const NAMES = {
  "mdq-duckdb": "MDQ (DuckDB)",
  "mdq-duckdb-nocache": "MDQ (DuckDB, no page cache)",
  "mdq-postgres": "MDQ (PostgreSQL)",
  "mdq-postgres-nocache": "MDQ (PostgreSQL, no page cache)",
};
const DUCKDB = ["mdq-duckdb", "mdq-duckdb-nocache"];
const POSTGRES = ["mdq-postgres", "mdq-postgres-nocache"];
/** The MDQs whose pages are computed on every request: what growth and page depth are about. */
const COMPUTING = ["mdq-duckdb-nocache", "mdq-postgres-nocache"];

/** A target on a ratio of two contenders in one scenario. */
const METRIC_NAMES = { rps: "req/s", rowsPerSecond: "rows/s" };
const ratioTarget = (scenario, contender, versus, versusName, metric, op, at) => ({
  text: `${scenario}: ${NAMES[contender]} ${METRIC_NAMES[metric] ?? metric} ${op === ">=" ? "≥" : "≤"} ${at}× ${versusName}`,
  at,
  op,
  measure: (results) => ratio(results, scenario, contender, versus, metric),
});

/**
 * The issue's targets, for MDQ as shipped (page cache on) and with every page computed (no page
 * cache). Each names what it compares; `measure(results)` returns the ratio (or value) or a
 * reason it could not be measured.
 */
const WALKS = ["cold-walk-1000", "cold-walk-5000"];
const TARGETS = [
  ...WALKS.flatMap((walk) => [
    ratioTarget(walk, "mdq-duckdb", "bare-memory", "in-memory limit", "rowsPerSecond", ">=", 0.5),
    ratioTarget(walk, "mdq-postgres", "bare-memory", "in-memory limit", "rowsPerSecond", ">=", 0.35),
    ratioTarget(walk, "mdq-duckdb", "yoga", "graphql-yoga", "rowsPerSecond", ">=", 3),
    ratioTarget(walk, "mdq-postgres", "postgraphile", "PostGraphile's cursor walk", "rowsPerSecond", ">=", 2),
    ...["mdq-duckdb", "mdq-postgres"].map((contender) => ({
      text: `${walk}: ${NAMES[contender]} last pages of a walk ≤ 1.2× its first pages`,
      at: 1.2,
      op: "<=",
      measure: (results) => {
        const result = find(results, walk, contender);
        if (!result) return { reason: `${contender} not measured in ${walk}` };
        if (result.lastVsFirst === null) return { reason: "walks too short (fewer than 6 pages)" };
        return {
          value: result.lastVsFirst,
          detail: `median over walks, ${result.pagesPerWalk} pages a walk`,
        };
      },
    })),
  ]),
  ...DUCKDB.flatMap((contender) => [
    ratioTarget("records-1000", contender, "bare-sql", "same-SQL route", "rps", ">=", 0.85),
    ratioTarget("records-5000", contender, "bare-sql", "same-SQL route", "rps", ">=", 0.75),
  ]),
  ...[...DUCKDB, ...POSTGRES].map((contender) =>
    ratioTarget("records-1000", contender, "bare-memory", "in-memory route", "rps", ">=", 0.4),
  ),
  ...DUCKDB.map((contender) =>
    ratioTarget("records-5000", contender, "yoga", "graphql-yoga", "rps", ">=", 3),
  ),
  ...DUCKDB.flatMap((contender) =>
    ["records-1000", "records-5000"].map((scenario) =>
      ratioTarget(scenario, contender, "bare-sql", "same-SQL route's p99", "p99", "<=", 1.25),
    ),
  ),
  ...POSTGRES.flatMap((contender) =>
    ["records-1000", "records-5000", "deep-page"].map((scenario) =>
      ratioTarget(scenario, contender, "postgraphile", "PostGraphile", "rps", ">=", 2),
    ),
  ),
  ...DUCKDB.map((contender) =>
    ratioTarget("aggregate", contender, "bare-sql", "same-SQL route", "rps", ">=", 0.85),
  ),
  ...POSTGRES.map((contender) =>
    ratioTarget("aggregate", contender, "bare-sql", "DuckDB's same-SQL route", "rps", ">=", 1),
  ),
  ...["mdq-duckdb", "mdq-postgres"].map((contender) =>
    ratioTarget("token", contender, "oidc", "node-oidc-provider", "rps", ">=", 2),
  ),
  ...COMPUTING.map((contender) => ({
    text: `growth: ${NAMES[contender]} page p50 at 50 M rows ≤ 1.5× at 1 M rows`,
    at: 1.5,
    op: "<=",
    measure: (results) => {
      const curve = results.growth?.sizes?.[contender];
      if (!curve)
        return { reason: results.growth?.sizes ? `${contender} not in the growth run` : "run with --growth" };
      const first = curve.find((point) => point.targetRows === 1_000_000);
      const last = curve.find((point) => point.targetRows === 50_000_000);
      if (!first || !last) return { reason: "the 1 M or 50 M point is missing" };
      return { value: last.p50 / first.p50, detail: `${fixed(first.p50, 1)} → ${fixed(last.p50, 1)} ms` };
    },
  })),
  ...COMPUTING.map((contender) => ({
    text: `page depth: ${NAMES[contender]} page 50 p50 ≤ 2× page 1 p50`,
    at: 2,
    op: "<=",
    measure: (results) => {
      const deep = find(results, "deep-page", contender);
      const first = find(results, "records-1000", contender);
      if (!deep || !first) return { reason: `${contender} not measured on both pages` };
      if (results.context.deepPage !== 50)
        return { reason: `only ${results.context.deepPage} full pages at this scale` };
      return { value: deep.p50 / first.p50, detail: `${fixed(first.p50, 1)} → ${fixed(deep.p50, 1)} ms` };
    },
  })),
  ...[...DUCKDB, ...POSTGRES].map((contender) => ({
    text: `memory: ${NAMES[contender]} peak RSS ≤ 512 MB under 50 concurrent 5000-row requests`,
    at: 512,
    op: "<=",
    unit: " MB",
    measure: (results) => {
      const memory = find(results, "memory", contender);
      if (!memory) return { reason: `${contender} not measured` };
      return { value: memory.peakRssMb, detail: `${memory.peakRssSource}` };
    },
  })),
];

function ratio(results, scenario, contender, versus, metric) {
  const ours = find(results, scenario, contender);
  const theirs = find(results, scenario, versus);
  if (!ours || !theirs) return { reason: `${!ours ? contender : versus} not measured in ${scenario}` };
  for (const [id, result] of [
    [versus, theirs],
    [contender, ours],
  ]) {
    if (!(result[metric] > 0))
      return { reason: `${id} completed no request in ${scenario}: lengthen --duration` };
  }
  return {
    value: ours[metric] / theirs[metric],
    detail: `${fixed(ours[metric], 1)} vs ${fixed(theirs[metric], 1)} ${METRIC_NAMES[metric] ?? "ms"}`,
  };
}

/** Every target with its verdict: MET, MISSED, or NOT MEASURED (with why). */
export function evaluateTargets(results) {
  return TARGETS.map((target) => {
    const measured = target.measure(results);
    if (measured.value === undefined || !Number.isFinite(measured.value))
      return { target: target.text, verdict: "NOT MEASURED", reason: measured.reason ?? "no value" };
    const met = target.op === ">=" ? measured.value >= target.at : measured.value <= target.at;
    return {
      target: target.text,
      verdict: met ? "MET" : "MISSED",
      measured: Number(measured.value.toFixed(3)),
      unit: target.unit ?? "×",
      detail: measured.detail,
    };
  });
}

/** The targets as a markdown table. */
export function targetsTable(verdicts) {
  const lines = ["| target | verdict | measured | detail |", "| --- | --- | ---: | --- |"];
  for (const verdict of verdicts) {
    const measured = verdict.measured === undefined ? "" : `${verdict.measured}${verdict.unit}`;
    lines.push(
      `| ${verdict.target} | ${verdict.verdict} | ${measured} | ${verdict.detail ?? verdict.reason ?? ""} |`,
    );
  }
  return lines.join("\n");
}

/** The growth curves as markdown tables. */
export function growthTables(growth, labels) {
  if (!growth) return "";
  const lines = [];
  if (growth.sizes) {
    lines.push(
      "| rows in the store | contender | page 1 p50 ms | p99 ms | req/s |",
      "| ---: | --- | ---: | ---: | ---: |",
    );
    for (const [contender, curve] of Object.entries(growth.sizes)) {
      for (const point of curve) {
        lines.push(
          `| ${point.rows.toLocaleString("en")} | ${labels[contender] ?? contender} | ${fixed(point.p50, 1)} | ${fixed(point.p99, 1)} | ${fixed(point.rps, 1)} |`,
        );
      }
    }
  }
  if (growth.pages) {
    lines.push(
      "",
      "| page (× 1000 rows) | contender | p50 ms | p99 ms | req/s |",
      "| ---: | --- | ---: | ---: | ---: |",
    );
    for (const [contender, curve] of Object.entries(growth.pages)) {
      for (const point of curve) {
        lines.push(
          `| ${point.page} | ${labels[contender] ?? contender} | ${fixed(point.p50, 1)} | ${fixed(point.p99, 1)} | ${fixed(point.rps, 1)} |`,
        );
      }
    }
  }
  return lines.join("\n");
}
