/**
 * `marketingDataChanges` over a range of any length: asked in windows of at most
 * MAX_CHANGES_RANGE_DAYS (366) days, oldest first, and joined into one answer.
 */
import { MAX_CHANGES_RANGE_DAYS } from "@mdq/contract";
import { checkDataChanges } from "../answer-validation.js";
import { type DateWindow, fromEpochDay, toEpochDay } from "../date-windows.js";
import { MdqClientError } from "../errors.js";
import { CHANGES_QUERY } from "../queries.js";
import type { DataChanges } from "../types.js";
import type { WalkService } from "../walk-types.js";

/** The days of `from..to` whose visible data changed after `since` (null: every day with data). */
export async function dataChanges(
  service: Pick<WalkService, "graphql">,
  brandClientId: string,
  options: { from: string; to: string; since: string | null; signal?: AbortSignal },
): Promise<DataChanges> {
  const answer: DataChanges = { dataVersion: "", fullResyncRequired: false, reason: null, days: [] };
  for (const window of changesWindows(options.from, options.to)) {
    const result = await service.graphql(
      CHANGES_QUERY,
      { clientId: brandClientId, dateRange: window, since: options.since },
      options.signal,
    );
    const changes = checkDataChanges(result.data["marketingDataChanges"], window);
    // Versions only grow: the first window's is the one every later change comes after.
    answer.dataVersion ||= changes.dataVersion;
    if (changes.fullResyncRequired) {
      answer.fullResyncRequired = true;
      answer.reason ??= changes.reason;
    }
    answer.days.push(...changes.days);
  }
  return answer;
}

/** `from..to` cut into consecutive windows of at most MAX_CHANGES_RANGE_DAYS (366) days, oldest first. */
function changesWindows(from: string, to: string): DateWindow[] {
  const last = toEpochDay(to);
  if (last < toEpochDay(from)) {
    throw new MdqClientError("INVALID_DATE_RANGE", `the range ends (${to}) before it starts (${from})`);
  }
  const windows: DateWindow[] = [];
  for (let start = toEpochDay(from); start <= last; start += MAX_CHANGES_RANGE_DAYS) {
    windows.push({
      from: fromEpochDay(start),
      to: fromEpochDay(Math.min(last, start + MAX_CHANGES_RANGE_DAYS - 1)),
    });
  }
  return windows;
}
