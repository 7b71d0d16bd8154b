/**
 * The queries. Resolvers validate arguments, ask the store, and record page info; aggregates come
 * back as plain objects so that graphql-jit serialises them with no per-field resolver on the hot
 * path, and records as a columnar page written by records-json.ts.
 */
import { MAX_CHANGES_RANGE_DAYS, type PageInfo, RECORD_FIELDS, todayIn } from "@mdq/contract";
import type { GraphQLResolveInfo } from "graphql";
import { MdqError } from "../errors.js";
import type { AggregateQuery } from "../store/model/query-request.js";
import type { PageResult, RecordReads } from "../store/model/store.js";
import { MissingFxRateError } from "../store/model/store-errors.js";
import {
  aggregateQueryOf,
  type Caller,
  checkClientId,
  checkDateRange,
  type DateRangeArgument,
  recordsQueryOf,
} from "./arguments.js";
import { dataVersionText, parseDataVersion } from "./data-version-text.js";
import { recordObjects, recordsJson } from "./records-json.js";
import type { ResponseBuffers } from "./response-buffers.js";
import { DateScalar, DateTimeScalar } from "./scalars.js";
import { plainSelection, selectedFieldNames } from "./selection.js";

/** What every resolver gets: the caller, the store, and where to put page info. */
export interface RequestContext {
  caller: Caller;
  store: RecordReads;
  timeZone: string;
  pageInfo: Record<string, PageInfo>;
  /**
   * Records pages written as JSON (records-json.ts), by response key: the resolver returns an
   * empty list and the endpoint writes this JSON in its place (graphql-endpoint.ts `responseChunks`).
   */
  recordsJson: Map<string, Buffer>;
  /** What `recordsJson` is written into, given back once the response is sent. */
  responseBuffers: ResponseBuffers;
}

function pageInfoOf(
  page: { page: number; pageSize: number },
  result: { totalCount: number; dataVersion: string },
  region: string,
): PageInfo {
  return {
    page: page.page,
    pageSize: page.pageSize,
    totalCount: result.totalCount,
    hasNextPage: page.page * page.pageSize < result.totalCount,
    dataVersion: dataVersionText(region, result.dataVersion),
  };
}

/** A `since` argument as a store version; INVALID_DATA_VERSION when this region never issued it. */
function sinceOf(since: string | null | undefined, region: string): bigint | null {
  if (since === null || since === undefined) return null;
  const version = parseDataVersion(region, since);
  if (version === undefined) {
    throw new MdqError(
      "INVALID_DATA_VERSION",
      `since (${JSON.stringify(since.slice(0, 80))}) is not a data version of region ${region}: pass a dataVersion this region returned, or null for every day`,
    );
  }
  return version;
}

/**
 * Runs a read of money in `currency`, a missing FX rate answered `UNSUPPORTED_CURRENCY` (rule 7).
 * The message says who can help (issue 57): a missing rate of the currency asked for, the caller
 * (another currency); of the stored records' own currency, only the region's operator.
 */
export async function withRates<Result>(currency: string, read: () => Promise<Result>): Promise<Result> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof MissingFxRateError) {
      const missing = `cannot convert: there is no ${error.currency} reference rate on or before ${error.date}`;
      throw new MdqError(
        "UNSUPPORTED_CURRENCY",
        error.currency === currency
          ? `${missing}, the currency asked for: ask for another currency (EUR needs no rate of its own) or leave out the money fields`
          : `${missing}, the currency of the brand's stored records: only the region's operator can load the missing rates; contact them`,
      );
    }
    throw error;
  }
}

/**
 * A paged field's resolver: plans the query from the arguments and the selected fields, reads one
 * page, and files its pageInfo under the field's response key (aliases get their own).
 */
function pagedResolver<Args, Query extends { page: { page: number; pageSize: number }; currency: string }>(
  plan: (args: Args, caller: Caller, selected: Set<string>) => Query,
  read: (store: RecordReads, query: Query) => Promise<PageResult<Record<string, unknown>>>,
) {
  return async (_root: unknown, args: Args, context: RequestContext, info: GraphQLResolveInfo) => {
    const query = plan(args, context.caller, selectedFieldNames(info));
    const result = await withRates(query.currency, () => read(context.store, query));
    context.pageInfo[String(info.path.key)] = pageInfoOf(query.page, result, context.caller.region);
    return result.rows;
  };
}

/**
 * `marketingRecords`: one columnar page from the store, whatever the sort and filter; a plain
 * selection is answered as the page's JSON (records-json.ts, the bytes graphql-jit would write),
 * keys in the selection's order; any other selection, or a page GraphQL would refuse a value of,
 * as row objects that execution serialises.
 */
async function recordsResolver(
  _root: unknown,
  args: Parameters<typeof recordsQueryOf>[0],
  context: RequestContext,
  info: GraphQLResolveInfo,
) {
  const plain = plainSelection(info, RECORD_FIELDS);
  const planned = recordsQueryOf(args, context.caller, plain ? new Set(plain) : selectedFieldNames(info));
  const query = plain ? { ...planned, fields: plain } : planned;
  const [page] = await withRates(query.currency, () => context.store.queryRecords(query));
  if (!page) throw new Error("the store answered a records query with no page");
  const key = String(info.path.key);
  context.pageInfo[key] = pageInfoOf(query.page, page, context.caller.region);
  const json = plain ? recordsJson(page, context.responseBuffers) : null;
  if (json === null) return recordObjects(page);
  context.recordsJson.set(key, json);
  return [];
}

/** The resolver map given to Mercurius. */
export const resolvers = {
  Date: DateScalar,
  DateTime: DateTimeScalar,
  Query: {
    async marketingDataReadiness(
      _root: unknown,
      args: { clientId: string; date?: string | null },
      context: RequestContext,
    ) {
      checkClientId(args.clientId, context.caller);
      const date = args.date ?? todayIn(context.timeZone);
      const facts = await context.store.readiness(context.caller.brandId, date, context.caller.grants);
      return {
        status: facts.published ? "READY" : "NOT_READY",
        lastProcessedAt: facts.lastProcessedAt,
        date,
        availableThrough: facts.availableThrough,
        dataVersion: dataVersionText(context.caller.region, facts.dataVersion),
      };
    },

    /** CONTRACT §6 rule 2: the days whose visible data changed since a version. */
    async marketingDataChanges(
      _root: unknown,
      args: { clientId: string; dateRange: DateRangeArgument; since?: string | null },
      context: RequestContext,
    ) {
      const { caller } = context;
      checkClientId(args.clientId, caller);
      checkDateRange(args.dateRange, MAX_CHANGES_RANGE_DAYS);
      const since = sinceOf(args.since, caller.region);
      const changes = await context.store.dataChanges({
        brandId: caller.brandId,
        appClientId: caller.appClientId,
        grants: caller.grants,
        from: args.dateRange.from,
        to: args.dateRange.to,
        since,
      });
      if (since !== null && since > changes.version) {
        throw new MdqError(
          "INVALID_DATA_VERSION",
          `since (${JSON.stringify(args.since)}) is later than the brand's current data version (${dataVersionText(caller.region, changes.version)})`,
        );
      }
      return {
        dataVersion: dataVersionText(caller.region, changes.version),
        fullResyncRequired: changes.scopeChange !== null,
        reason: changes.scopeChange,
        days: changes.days.map((day) => ({
          date: day.date,
          dataVersion: dataVersionText(caller.region, day.version),
          changedAt: day.changedAt,
          rows: day.rows,
        })),
      };
    },

    /** CONTRACT §6 rule 3: the caller's effective access, so a client need not probe for 403s. */
    myAccess(_root: unknown, args: { clientId: string }, context: RequestContext) {
      const { caller } = context;
      checkClientId(args.clientId, caller);
      return {
        brandId: caller.brandId,
        appClientId: caller.appClientId,
        markets: [...caller.grants.markets].sort(),
        dataSources: [...caller.grants.dataSources].sort(),
        scope: caller.scope,
        region: caller.region,
        tokenExpiresAt: caller.tokenExpiresAt,
      };
    },

    marketingRecords: recordsResolver,
    marketingAggregate: pagedResolver(aggregateQueryOf, (store, query: AggregateQuery) =>
      store.queryAggregate(query),
    ),
  },
};
