/**
 * Exports take turns at the engine (export/export-turns.ts): with L lanes, at most L exports wait
 * on their rows at once, every export still gets all its chunks in order, and an export whose
 * consumer stops reading gives its lane away once its slice is over.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { ExportTurns } from "../src/export/export-turns.js";

/** An engine of `chunks` chunks, each taking `ms` to produce, noting how many produce at once. */
function engine(chunks: number, ms: number, busy: { now: number; most: number }) {
  return (async function* () {
    for (let index = 0; index < chunks; index += 1) {
      busy.now += 1;
      busy.most = Math.max(busy.most, busy.now);
      await delay(ms);
      busy.now -= 1;
      yield index;
    }
  })();
}

async function readAll(chunks: AsyncIterable<number>): Promise<number[]> {
  const read: number[] = [];
  for await (const chunk of chunks) read.push(chunk);
  return read;
}

const inOrder = (count: number) => Array.from({ length: count }, (_, index) => index);

describe("export turns", () => {
  for (const lanes of [1, 2]) {
    it(`lets at most ${lanes} of 4 exports read at once, each whole and in order`, async () => {
      const turns = new ExportTurns(lanes, 5);
      const busy = { now: 0, most: 0 };
      const read = await Promise.all(
        Array.from({ length: 4 }, () => readAll(turns.paced(engine(30, 1, busy)))),
      );
      assert.equal(busy.most, lanes);
      for (const chunks of read) assert.deepEqual(chunks, inOrder(30));
    });
  }

  it("lets an export alone read without waiting, and frees its lane when it ends early", async () => {
    const turns = new ExportTurns(1, 5);
    const busy = { now: 0, most: 0 };
    for await (const chunk of turns.paced(engine(10, 0, busy))) if (chunk === 3) break;
    // The lane came back: the next export reads at once.
    assert.deepEqual(await readAll(turns.paced(engine(5, 0, busy))), inOrder(5));
  });

  it("hands the lane on when an export's consumer stops reading", async () => {
    const turns = new ExportTurns(1, 5);
    const busy = { now: 0, most: 0 };
    const stalled = turns.paced(engine(10, 0, busy));
    assert.deepEqual(await stalled.next(), { value: 0, done: false });
    // The stalled export holds the only lane and asks nothing more; another reads all the same.
    const other = await Promise.race([
      readAll(turns.paced(engine(20, 0, busy))),
      delay(2000).then(() => "held back"),
    ]);
    assert.deepEqual(other, inOrder(20));
    // The stalled one reads on once its consumer asks again.
    assert.deepEqual(await readAll(stalled), inOrder(10).slice(1));
  });
});
