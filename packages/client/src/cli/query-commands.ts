/**
 * The one-off commands: `readiness`, `access`, `records` and `aggregate` print one answer on stdout, as
 * JSON (default) or a table. For files of any size, use `sync`.
 */

import {
  AGGREGATE_SORT_FIELDS,
  DIMENSIONS,
  inclusiveDayCount,
  isDateDimension,
  MAX_RANGE_DAYS,
  METRICS,
  RECORD_FIELDS,
  RECORD_SORT_FIELDS,
} from "@mdq/contract";
import { Command, Option } from "commander";
import type {
  AggregateSortField,
  Dimension,
  MarketingAggregate,
  MarketingRecord,
  Metric,
  RecordSortField,
} from "../types.js";
import {
  checkRange,
  dateRangeCommand,
  type FilterFlags,
  filterFrom,
  parseDate,
  parseInteger,
  parseNames,
  parseSort,
  type SortEntry,
  UsageError,
} from "./cli-options.js";
import { clientFromEnv } from "./connect.js";
import { interruption } from "./interrupt.js";
import { PRINT_FORMATS, type PrintFormat, print } from "./output.js";
import { withFilterFlags } from "./sync-command.js";

/** The record field a `RecordSortField` orders by. */
const RECORD_SORT_KEY: Record<RecordSortField, keyof MarketingRecord> = {
  DATE_DAY: "date",
  MARKET: "market",
  DATA_SOURCE: "dataSource",
  CHANNEL: "channel",
  CAMPAIGN_ID: "campaignId",
  IMPRESSIONS: "impressions",
  CLICKS: "clicks",
  SPEND: "spend",
  CONVERSIONS: "conversions",
  REVENUE: "revenue",
};

function formatOption(): Option {
  return new Option("--format <format>", "json or table").choices(PRINT_FORMATS).default("json");
}

/** Whether `from..to` needs more than one request window (> 90 days). */
function spansWindows(from: string, to: string): boolean {
  return inclusiveDayCount(from, to) > MAX_RANGE_DAYS;
}

/** Orders rows by `keys` (each with a direction), as the service does within one window. */
function compareBy<Row>(keys: { get: (row: Row) => unknown; direction: "ASC" | "DESC" }[]) {
  return (a: Row, b: Row): number => {
    for (const { get, direction } of keys) {
      const x = get(a);
      const y = get(b);
      if (x === y) continue;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      const order = (x as number | string) < (y as number | string) ? -1 : 1;
      return direction === "ASC" ? order : -order;
    }
    return 0;
  };
}

export function readinessCommand(): Command {
  return new Command("readiness")
    .description(
      "Is the brand's data for a processing date published (READY)? Prints marketingDataReadiness.",
    )
    .option("--date <date>", "processing date, YYYY-MM-DD (default: the region's today)", parseDate)
    .addOption(formatOption())
    .action(async (flags: { date?: string; format: PrintFormat }) => {
      const client = clientFromEnv(process.env);
      const readiness = await client.readiness(flags.date, interruption.signal);
      print(flags.format, readiness, (answer) => ({
        headers: ["STATUS", "DATE", "LAST_PROCESSED_AT", "AVAILABLE_THROUGH"],
        rows: [[answer.status, answer.date, answer.lastProcessedAt, answer.availableThrough]],
      }));
    });
}

/** `mdq-client access`: prints `myAccess`, what these credentials may read. */
export function accessCommand(): Command {
  return new Command("access")
    .description("What may these credentials read? Prints myAccess: markets, data sources, token expiry.")
    .addOption(formatOption())
    .action(async (flags: { format: PrintFormat }) => {
      const client = clientFromEnv(process.env);
      const access = await client.myAccess(interruption.signal);
      print(flags.format, access, (answer) => ({
        headers: ["BRAND", "APP", "MARKETS", "DATA_SOURCES", "SCOPE", "REGION", "TOKEN_EXPIRES_AT"],
        rows: [
          [
            answer.brandId,
            answer.appClientId,
            answer.markets.join(","),
            answer.dataSources.join(","),
            answer.scope,
            answer.region,
            answer.tokenExpiresAt,
          ],
        ],
      }));
    });
}

interface RecordsFlags extends FilterFlags {
  from: string;
  to: string;
  currency?: string;
  sort?: SortEntry<RecordSortField>[];
  limit?: number;
  format: PrintFormat;
}

export function recordsCommand(): Command {
  const command = dateRangeCommand(
    "records",
    "Print the records of a date range (every page, any length of range).",
  )
    .option(
      "--sort <list>",
      "FIELD[:ASC|DESC],... (default DATE_DAY:ASC; ties by recordId)",
      parseSort(RECORD_SORT_FIELDS),
    )
    .option("--limit <rows>", "print at most this many records", parseInteger(1, Number.MAX_SAFE_INTEGER));
  return withFilterFlags(command)
    .addOption(formatOption())
    .action(async (flags: RecordsFlags) => {
      checkRange(flags.from, flags.to);
      const client = clientFromEnv(process.env);
      const sort = flags.sort ?? [{ field: "DATE_DAY", direction: "ASC" }];
      const filter = filterFrom(flags);
      // Windows come oldest (or newest) first, so a sort led by anything but the day holds only
      // within a window: over several windows the rows are put in order here.
      const sortHere = spansWindows(flags.from, flags.to) && sort[0]?.field !== "DATE_DAY";
      const records: MarketingRecord[] = [];
      for await (const record of client.records({
        from: flags.from,
        to: flags.to,
        sort,
        signal: interruption.signal,
        ...(flags.currency === undefined ? {} : { currency: flags.currency }),
        ...(filter === null ? {} : { filter }),
      })) {
        records.push(record);
        if (flags.limit !== undefined && records.length >= flags.limit && !sortHere) break;
      }
      if (sortHere) {
        records.sort(
          compareBy<MarketingRecord>([
            ...sort.map(({ field, direction }) => ({
              get: (row: MarketingRecord) => row[RECORD_SORT_KEY[field]],
              direction,
            })),
            { get: (row) => row.recordId, direction: "ASC" },
          ]),
        );
      }
      const shown = flags.limit === undefined ? records : records.slice(0, flags.limit);
      print(flags.format, shown, (rows) => ({
        headers: RECORD_FIELDS,
        rows: rows.map((row) => RECORD_FIELDS.map((field) => row[field])),
      }));
    });
}

interface AggregateFlags extends FilterFlags {
  from: string;
  to: string;
  metrics: Metric[];
  groupBy?: Dimension[];
  currency?: string;
  sort?: SortEntry<AggregateSortField>[];
  format: PrintFormat;
}

/** `--group-by`: dimensions, or `none` for one row of grand totals. */
function parseGroupBy(value: string): Dimension[] {
  return value.trim().toLowerCase() === "none" ? [] : parseNames(DIMENSIONS)(value);
}

export function aggregateCommand(): Command {
  const command = dateRangeCommand(
    "aggregate",
    "Print totals of a date range, grouped by dimensions (marketingAggregate).",
  )
    .requiredOption(
      "--metrics <list>",
      `metrics to total: ${METRICS.join(", ")} (e.g. SPEND,REVENUE)`,
      parseNames(METRICS),
    )
    .option(
      "--group-by <list>",
      `dimensions: ${DIMENSIONS.join(", ")}, or none for grand totals (default DATE_DAY)`,
      parseGroupBy,
    )
    .option(
      "--sort <list>",
      "at most 2 of FIELD[:ASC|DESC] among the grouped dimensions and TOTAL_<metric> (default: newest date first)",
      parseSort(AGGREGATE_SORT_FIELDS),
    );
  return withFilterFlags(command)
    .addOption(formatOption())
    .action(async (flags: AggregateFlags) => {
      checkRange(flags.from, flags.to);
      const groupBy = flags.groupBy ?? ["DATE_DAY"];
      const multiWindow = spansWindows(flags.from, flags.to);
      if (multiWindow && !groupBy.some((dimension) => isDateDimension(dimension))) {
        throw new UsageError(
          `the service totals at most ${MAX_RANGE_DAYS} days at a time: over a longer range, group by ` +
            "DATE_DAY, DATE_WEEK or DATE_MONTH too (and add up the periods you need)",
        );
      }
      const client = clientFromEnv(process.env);
      const filter = filterFrom(flags);
      const rows: MarketingAggregate[] = [];
      for await (const row of client.aggregate({
        from: flags.from,
        to: flags.to,
        metrics: flags.metrics,
        signal: interruption.signal,
        ...(flags.groupBy === undefined ? {} : { groupBy: flags.groupBy }),
        ...(flags.sort === undefined ? {} : { sort: flags.sort }),
        ...(flags.currency === undefined ? {} : { currency: flags.currency }),
        ...(filter === null ? {} : { filter }),
      })) {
        rows.push(row);
      }
      const sort = flags.sort ?? [];
      if (multiWindow && sort.length > 0 && !isDateDimension(sort[0]!.field)) {
        rows.sort(
          compareBy<MarketingAggregate>([
            ...sort.map(({ field, direction }) => ({
              get: (row: MarketingAggregate) => row[field],
              direction,
            })),
            ...groupBy.map((dimension) => ({
              get: (row: MarketingAggregate) => row[dimension],
              direction: "ASC" as const,
            })),
          ]),
        );
      }
      const columns = [
        ...groupBy,
        ...flags.metrics.map((metric) => `TOTAL_${metric}` as const),
        "currency",
      ] as const;
      const shown = rows.map((row) =>
        Object.fromEntries(columns.map((column) => [column, row[column as keyof MarketingAggregate]])),
      );
      print(flags.format, shown, (list) => ({
        headers: columns,
        rows: list.map((row) => columns.map((column) => row[column])),
      }));
    });
}
