/**
 * Reads the stored FX rates that walks, rollup aggregates and exports convert and check with, once
 * per data generation and calendar year (reads/walk-memory.ts).
 */
import type { SnapshotReader } from "../../model/engine.js";
import { type DayRates, FxHistory, YearlyRates } from "../../sql/record-money.js";
import type { WalkMemory } from "../walk-memory.js";
import { planFxRates } from "./fx-rates-plan.js";

/**
 * The stored FX rates a walk (or a rollup aggregate) of `range` converts and checks with: those
 * each calendar year of its days can use (`SqlDialect.fxRates`), read once per generation and year
 * (`WalkMemory`), so that a dashboard's next window or a sync's next range in the same years reads
 * none; or, when the snapshot's generation is not known for sure, those of `range`, read for this
 * page alone. Not the whole history: ECB's since 1999 (279 k rates) took 0.3 s to read, on the
 * first answer after every load. Read per range, each new window of a 90-day aggregate at scale
 * 600 spent 7–10 ms of its 25–35 ms reading rates (2026-11-26); a year takes 20–25 ms, once.
 */
export function walkRates(
  reader: SnapshotReader,
  walks: WalkMemory,
  generation: string | null,
  range: { from: string; to: string },
): () => Promise<DayRates> {
  if (generation === null) {
    let history: Promise<DayRates> | undefined;
    return () => {
      history ??= readFxHistory(reader, range);
      return history;
    };
  }
  return async () => {
    const years = calendarYears(range);
    const histories = await Promise.all(
      years.map((year) => walks.fxHistory(generation, year, () => readFxHistory(reader, year))),
    );
    return histories.length === 1
      ? histories[0]!
      : new YearlyRates(new Map(years.map((year, index) => [year.from.slice(0, 4), histories[index]!])));
  };
}

/** The calendar years `range` spans, each as its own range of days. */
function calendarYears(range: { from: string; to: string }): { from: string; to: string }[] {
  const years: { from: string; to: string }[] = [];
  for (let year = Number(range.from.slice(0, 4)); year <= Number(range.to.slice(0, 4)); year += 1) {
    const digits = String(year).padStart(4, "0");
    years.push({ from: `${digits}-01-01`, to: `${digits}-12-31` });
  }
  return years;
}

/** The stored FX rates the days of `range` can use (query-planner.ts `planFxRates`). */
export async function readFxHistory(
  reader: SnapshotReader,
  range: { from: string; to: string },
): Promise<DayRates> {
  const table = await reader.run(planFxRates(reader.dialect, range));
  return new FxHistory(
    Array.from({ length: table.rowCount }, (_, index) => ({
      currency: String(table.value(index, 0)),
      date: String(table.value(index, 1)),
      rateE6: BigInt(table.value(index, 2) as bigint | string | number),
    })),
  );
}
