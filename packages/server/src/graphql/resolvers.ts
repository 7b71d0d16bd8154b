/**
 * The three queries. Resolvers validate arguments, ask the store, and record page info; records
 * and aggregates come back as plain objects so that graphql-jit serialises them with no
 * per-field resolver on the hot path.
 */
import { type PageInfo, todayIn } from "@mdq/contract";
import type { GraphQLResolveInfo } from "graphql";
import { MdqError } from "../errors.js";
import { MissingFxRateError, type RecordReads } from "../store/store.js";
import {
  type AggregateArguments,
  aggregateQueryOf,
  type Caller,
  checkClientId,
  type RecordsArguments,
  recordsQueryOf,
} from "./arguments.js";
import { DateScalar, DateTimeScalar } from "./scalars.js";
import { selectedFieldNames } from "./selection.js";

/** What every resolver gets: the caller, the store, and where to put page info. */
export interface RequestContext {
  caller: Caller;
  store: RecordReads;
  timeZone: string;
  pageInfo: Record<string, PageInfo>;
}

function pageInfoOf(
  page: { page: number; pageSize: number },
  result: { totalCount: number; dataVersion: string },
): PageInfo {
  return {
    page: page.page,
    pageSize: page.pageSize,
    totalCount: result.totalCount,
    hasNextPage: page.page * page.pageSize < result.totalCount,
    dataVersion: result.dataVersion,
  };
}

async function withRates<Result>(read: () => Promise<Result>): Promise<Result> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof MissingFxRateError) {
      throw new MdqError(
        "UNSUPPORTED_CURRENCY",
        `cannot convert: there is no ${error.currency} reference rate on or before ${error.date}`,
      );
    }
    throw error;
  }
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
      };
    },

    async marketingRecords(
      _root: unknown,
      args: RecordsArguments,
      context: RequestContext,
      info: GraphQLResolveInfo,
    ) {
      const query = recordsQueryOf(args, context.caller, selectedFieldNames(info));
      const result = await withRates(() => context.store.queryRecords(query));
      context.pageInfo[String(info.path.key)] = pageInfoOf(query.page, result);
      return result.rows;
    },

    async marketingAggregate(
      _root: unknown,
      args: AggregateArguments,
      context: RequestContext,
      info: GraphQLResolveInfo,
    ) {
      const query = aggregateQueryOf(args, context.caller, selectedFieldNames(info));
      const result = await withRates(() => context.store.queryAggregate(query));
      context.pageInfo[String(info.path.key)] = pageInfoOf(query.page, result);
      return result.rows;
    },
  },
};
