// An SVG a person can look at: one bar panel per scenario (req/s per contender, median of the
// rounds, each panel on its own scale) and, after a --growth run, the latency curves.

const COLORS = {
  "mdq-duckdb": "#1f77b4",
  "mdq-duckdb-nocache": "#aec7e8",
  "mdq-postgres": "#17becf",
  "mdq-postgres-nocache": "#9edae5",
  "bare-memory": "#7f7f7f",
  "bare-sql": "#bcbd22",
  yoga: "#ff7f0e",
  postgraphile: "#9467bd",
  oidc: "#d62728",
};
const PANEL = { width: 520, height: 250, top: 34, left: 250, right: 60, bottom: 14 };

const escapeXml = (text) =>
  String(text)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");

/** Bars of one scenario: req/s per contender, or peak RSS for the memory scenario. */
function barPanel(scenario, labels, x, y) {
  const rows = scenario.results;
  const memory = scenario.id === "memory";
  const measureOf = (row) => (memory ? row.peakRssMb : row.rps);
  const max = Math.max(...rows.map(measureOf), memory ? 512 : 1);
  const plotWidth = PANEL.width - PANEL.left - PANEL.right;
  const band = Math.min((PANEL.height - PANEL.top - PANEL.bottom) / Math.max(rows.length, 1), 48);
  const parts = [
    `<g transform="translate(${x},${y})">`,
    `<rect width="${PANEL.width}" height="${PANEL.height}" fill="#fff" stroke="#ddd"/>`,
    `<text x="10" y="20" font-size="13" font-weight="bold">${escapeXml(scenario.title)} — ${memory ? "peak RSS, MB (lower is better)" : scenario.kind === "walk" ? "rows/s" : "req/s"}</text>`,
  ];
  rows.forEach((row, index) => {
    const top = PANEL.top + index * band;
    const value = measureOf(row);
    const width = (value / max) * plotWidth;
    const baseline = row.contender === scenario.baseline ? " (baseline)" : "";
    parts.push(
      `<text x="${PANEL.left - 6}" y="${top + band / 2 + 4}" font-size="11" text-anchor="end">${escapeXml((labels[row.contender] ?? row.contender) + baseline)}</text>`,
      `<rect x="${PANEL.left}" y="${top + 3}" width="${width.toFixed(1)}" height="${Math.max(band - 6, 2).toFixed(1)}" fill="${COLORS[row.contender] ?? "#333"}"/>`,
      `<text x="${(PANEL.left + width + 4).toFixed(1)}" y="${top + band / 2 + 4}" font-size="11">${value.toFixed(value < 100 ? 1 : 0)}</text>`,
    );
  });
  if (memory) {
    const limit = PANEL.left + (512 / max) * plotWidth;
    parts.push(
      `<line x1="${limit.toFixed(1)}" y1="${PANEL.top - 4}" x2="${limit.toFixed(1)}" y2="${PANEL.height - PANEL.bottom}" stroke="#d62728" stroke-dasharray="4 3"/>`,
      `<text x="${(limit - 4).toFixed(1)}" y="${PANEL.height - PANEL.bottom - 4}" font-size="10" fill="#d62728" text-anchor="end">512 MB target</text>`,
    );
  }
  for (const skipped of scenario.skipped) {
    parts.push(
      `<text x="10" y="${PANEL.height - PANEL.bottom - 4 - 14 * scenario.skipped.indexOf(skipped)}" font-size="10" fill="#888">${escapeXml(`${labels[skipped.contender] ?? skipped.contender}: skipped (${skipped.reason})`)}</text>`,
    );
  }
  if (rows.length === 0) parts.push(`<text x="10" y="60" font-size="12">no contender measured</text>`);
  parts.push("</g>");
  return parts.join("\n");
}

/** A line panel: p50 latency against `x` (log scale when `log`), one line per contender. */
function linePanel(title, curves, xOf, xLabel, log, x, y) {
  const points = Object.values(curves).flat();
  const xs = points.map((point) => (log ? Math.log10(xOf(point)) : xOf(point)));
  const [minX, maxX] = [Math.min(...xs), Math.max(...xs)];
  const maxY = Math.max(...points.map((point) => point.p50), 1) * 1.1;
  const left = 60;
  const plotWidth = PANEL.width - left - 20;
  const plotHeight = PANEL.height - PANEL.top - 40;
  const sx = (value) => left + ((value - minX) / Math.max(maxX - minX, 1e-9)) * plotWidth;
  const sy = (value) => PANEL.top + plotHeight - (value / maxY) * plotHeight;
  const parts = [
    `<g transform="translate(${x},${y})">`,
    `<rect width="${PANEL.width}" height="${PANEL.height}" fill="#fff" stroke="#ddd"/>`,
    `<text x="10" y="20" font-size="13" font-weight="bold">${escapeXml(title)}</text>`,
    `<line x1="${left}" y1="${PANEL.top + plotHeight}" x2="${left + plotWidth}" y2="${PANEL.top + plotHeight}" stroke="#999"/>`,
    `<line x1="${left}" y1="${PANEL.top}" x2="${left}" y2="${PANEL.top + plotHeight}" stroke="#999"/>`,
    `<text x="${left - 6}" y="${PANEL.top + 4}" font-size="10" text-anchor="end">${maxY.toFixed(0)} ms</text>`,
    `<text x="${left - 6}" y="${PANEL.top + plotHeight}" font-size="10" text-anchor="end">0</text>`,
    `<text x="${left + plotWidth / 2}" y="${PANEL.height - 8}" font-size="11" text-anchor="middle">${escapeXml(xLabel)}</text>`,
  ];
  let legend = 0;
  for (const [contender, curve] of Object.entries(curves)) {
    const color = COLORS[contender] ?? "#333";
    const path = curve
      .map((point, index) => {
        const px = sx(log ? Math.log10(xOf(point)) : xOf(point));
        return `${index === 0 ? "M" : "L"}${px.toFixed(1)},${sy(point.p50).toFixed(1)}`;
      })
      .join(" ");
    parts.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const point of curve) {
      const px = sx(log ? Math.log10(xOf(point)) : xOf(point));
      parts.push(
        `<circle cx="${px.toFixed(1)}" cy="${sy(point.p50).toFixed(1)}" r="3" fill="${color}"/>`,
        `<text x="${px.toFixed(1)}" y="${(PANEL.top + plotHeight + 14).toFixed(1)}" font-size="10" text-anchor="middle">${escapeXml(log ? `${(xOf(point) / 1e6).toFixed(1)}M` : xOf(point))}</text>`,
      );
    }
    parts.push(
      `<text x="${left + 8}" y="${PANEL.top + 14 + legend * 14}" font-size="11" fill="${color}">${escapeXml(contender)} p50</text>`,
    );
    legend += 1;
  }
  parts.push("</g>");
  return parts.join("\n");
}

/** The whole chart for a run's results. */
export function renderChart(results, labels) {
  const panels = results.scenarios.filter((scenario) => scenario.results.length > 0);
  const columns = 2;
  const gap = 16;
  /** The top-left corner of the panel in `slot`, row by row. */
  const positionOf = (slot) => [
    gap + (slot % columns) * (PANEL.width + gap),
    60 + Math.floor(slot / columns) * (PANEL.height + gap),
  ];
  const rendered = panels.map((scenario, index) => barPanel(scenario, labels, ...positionOf(index)));
  const growthPanels = [
    [
      "page 1 latency vs rows in the store",
      results.growth?.sizes,
      (point) => point.rows,
      "rows (log scale)",
      true,
    ],
    [
      "page latency vs page number",
      results.growth?.pages,
      (point) => point.page,
      "page (1000 rows each)",
      false,
    ],
  ];
  let slot = panels.length;
  for (const [title, points, xOf, xLabel, log] of growthPanels) {
    if (!points) continue;
    rendered.push(linePanel(title, points, xOf, xLabel, log, ...positionOf(slot)));
    slot += 1;
  }
  const rows = Math.ceil(slot / columns);
  const width = gap + columns * (PANEL.width + gap);
  const height = 60 + rows * (PANEL.height + gap);
  const subtitle = `scale ${results.options.scale} (${results.context.rows.toLocaleString("en")} rows), ${results.options.rounds} rounds × ${results.options.duration} s, ${results.options.connections} connections, median of rounds; ${results.machine.cpus} × ${results.machine.cpu}, Node ${results.machine.node}, ${results.startedAt}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="#f7f7f7"/>
<text x="${gap}" y="26" font-size="18" font-weight="bold">MDQ benchmark: throughput per scenario (higher is better), memory, growth</text>
<text x="${gap}" y="46" font-size="11" fill="#555">${escapeXml(subtitle)}</text>
${rendered.join("\n")}
</svg>
`;
}
