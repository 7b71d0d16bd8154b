/**
 * What the long commands (`export`, `sync`, `mirror`) show while they work: a bar redrawn in place
 * on a terminal, never wider than it, and plain log lines elsewhere, at most one every interval.
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
  step: { name: "window", at: 3, of: 12 },
  resumedRows: 0,
  startedAt: Date.now() - 10_000,
  ...overrides,
});

describe("progress of export, sync and mirror", () => {
  it("draws a bar with rows, pages, rate and ETA on a terminal, in place", () => {
    const output = recorder({ isTTY: true, columns: 120 });
    const progress = terminalProgress(output, 0);
    progress.update(snapshot());
    assert.ok(output.writes[0]!.startsWith(REDRAW));
    const line = output.writes[0]!.slice(REDRAW.length);
    assert.match(line, /^\[#{8}-{22}\] 25% 250,000\/~1,000,000 rows \| 50 pages \| window 3\/12 \| /);
    assert.match(line, /\| 2\d,\d{3} rows\/s \| ETA 0:[23]\d$/);
    progress.done("wrote 1,000,000 rows");
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

  it("writes plain log lines, at most one per interval, when stderr is not a terminal", async () => {
    const output = recorder({ isTTY: false });
    const progress = logProgress(output, 30);
    progress.update(snapshot());
    await new Promise((resolve) => setTimeout(resolve, 40));
    progress.update(snapshot({ rows: 260_000, pages: 52 }));
    progress.update(snapshot({ rows: 270_000, pages: 53 }));
    progress.note("resuming");
    progress.done("wrote 1,000,000 rows");
    assert.equal(output.writes.length, 3);
    assert.match(
      output.writes[0]!,
      /^mdq-client: 260,000\/~1,000,000 rows, 52 pages, window 3\/12, .* rows\/s, ETA .*\n$/,
    );
    assert.deepEqual(output.writes.slice(1), [
      "mdq-client: resuming\n",
      "mdq-client: wrote 1,000,000 rows\n",
    ]);
    assert.ok(output.writes.every((text) => !text.includes("\r")));
  });

  it("names only what a run counts: an export's rows, without pages or windows", async () => {
    const output = recorder({ isTTY: false });
    const progress = logProgress(output, 0);
    await new Promise((resolve) => setTimeout(resolve, 2));
    progress.update({
      rows: 5_000,
      totalRows: 20_000,
      totalExact: true,
      resumedRows: 0,
      startedAt: Date.now() - 1_000,
    });
    assert.match(output.writes[0]!, /^mdq-client: 5,000\/20,000 rows, 5,000 rows\/s, ETA 0:03\n$/);
  });

  it("chooses the bar for a terminal, log lines otherwise, and only the summary with --quiet", () => {
    const terminal = recorder({ isTTY: true, columns: 100 });
    progressFor(terminal).update(snapshot());
    assert.ok(terminal.writes[0]!.startsWith(`${REDRAW}[`));
    const log = recorder({ isTTY: false });
    progressFor(log).update(snapshot());
    assert.deepEqual(log.writes, [], "the first log line comes after the interval");
    const quiet = recorder({ isTTY: true });
    const progress = progressFor(quiet, { quiet: true });
    progress.update(snapshot());
    progress.note("resuming");
    progress.done("wrote 250,000 rows");
    assert.deepEqual(quiet.writes, ["mdq-client: wrote 250,000 rows\n"]);
  });
});
