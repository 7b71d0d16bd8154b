/**
 * What `sync` shows while it works: a bar redrawn in place on a terminal, never wider than it,
 * and plain, throttled log lines elsewhere.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { logProgress, type ProgressSnapshot, progressFor, terminalProgress } from "../src/cli/progress.js";

/** Erase-line and carriage return, which a bar starts each redraw with. */
const REDRAW = "\r\x1b[2K";

function recorder(options: { isTTY?: boolean; columns?: number } = {}) {
  const writes: string[] = [];
  return {
    writes,
    isTTY: options.isTTY,
    columns: options.columns,
    write: (text: string) => writes.push(text),
  };
}

const snapshot = (overrides: Partial<ProgressSnapshot> = {}): ProgressSnapshot => ({
  rows: 250_000,
  pages: 50,
  totalRows: 1_000_000,
  totalExact: false,
  window: 3,
  windows: 12,
  resumedRows: 0,
  startedAt: Date.now() - 10_000,
  ...overrides,
});

describe("sync progress", () => {
  it("draws a bar with rows, pages, rate and ETA on a terminal, in place", () => {
    const output = recorder({ isTTY: true, columns: 120 });
    const progress = terminalProgress(output, 0);
    progress.update(snapshot());
    assert.ok(output.writes[0]!.startsWith(REDRAW));
    const line = output.writes[0]!.slice(REDRAW.length);
    assert.match(line, /^\[#{8}-{22}\] 25% 250,000\/~1,000,000 rows \| 50 pages \| window 3\/12 \| /);
    assert.match(line, /\| 2\d,\d{3} rows\/s \| ETA 0:[23]\d$/);
    progress.done(snapshot({ rows: 1_000_000, totalExact: true }), "wrote 1,000,000 rows");
    assert.deepEqual(output.writes.slice(1), [REDRAW, "mdq-client: wrote 1,000,000 rows\n"]);
  });

  it("keeps the bar within a narrow terminal so that redrawing it never wraps", () => {
    for (const columns of [40, 60, 80, 100]) {
      const output = recorder({ isTTY: true, columns });
      terminalProgress(output, 0).update(snapshot());
      const visible = output.writes[0]!.replace(REDRAW, "");
      assert.ok(visible.length < columns, `${visible.length} characters in ${columns} columns: ${visible}`);
    }
  });

  it("writes plain log lines, at most one per interval, when stderr is not a terminal", () => {
    const output = recorder({ isTTY: false });
    const progress = logProgress(output, 60_000);
    progress.update(snapshot());
    progress.update(snapshot({ rows: 260_000, pages: 52 }));
    progress.windowDone(snapshot({ rows: 270_000 }), { from: "2026-01-15", to: "2026-01-21", rows: 20_000 });
    progress.windowDone(snapshot({ rows: 1_000_000, window: 12, totalExact: true, totalRows: 1_000_000 }), {
      from: "2026-03-20",
      to: "2026-03-26",
      rows: 10_000,
    });
    progress.note("resuming");
    assert.equal(output.writes.length, 3);
    assert.match(
      output.writes[0]!,
      /^mdq-client: window 3\/12: 250,000\/~1,000,000 rows, 50 pages, .* ETA .*\n$/,
    );
    assert.match(
      output.writes[1]!,
      /^mdq-client: window 12\/12 \(2026-03-20..2026-03-26\) done: 1,000,000\/1,000,000 rows/,
    );
    assert.equal(output.writes[2], "mdq-client: resuming\n");
    assert.ok(output.writes.every((text) => !text.includes("\r")));
  });

  it("chooses the bar for a terminal, log lines otherwise, and only the summary with --quiet", () => {
    const terminal = recorder({ isTTY: true, columns: 100 });
    progressFor(terminal).update(snapshot());
    assert.ok(terminal.writes[0]!.startsWith(`${REDRAW}[`));
    const log = recorder({ isTTY: false });
    progressFor(log).update(snapshot());
    assert.match(log.writes[0]!, /^mdq-client: window 3\/12/);
    const quiet = recorder({ isTTY: true });
    const progress = progressFor(quiet, { quiet: true });
    progress.update(snapshot());
    progress.note("resuming");
    progress.done(snapshot(), "wrote 250,000 rows");
    assert.deepEqual(quiet.writes, ["mdq-client: wrote 250,000 rows\n"]);
  });
});
