/**
 * The words of a page walk (page-walk.ts) and of its repair (window-repair.ts), below both: what
 * a walk asks of the client, the plan of one walk, a try of a window that came apart, and the two
 * fetches a repair is given.
 */
import type { PageRequest } from "./answer-validation.js";
import type { DateWindow } from "./date-windows.js";
import type { RunLimits } from "./run-limits.js";
import type { DataChanges, MdqClientEvent, Page } from "./types.js";

/** A GraphQL answer without errors: its `data` and `extensions`. */
export interface GraphQLResult {
  data: Record<string, unknown>;
  extensions: Record<string, unknown>;
}

/** What a walk asks of the client: GraphQL requests, changes, and whom to tell. */
export interface WalkService {
  graphql(query: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<GraphQLResult>;
  dataChanges(options: {
    from: string;
    to: string;
    since: string | null;
    signal?: AbortSignal;
  }): Promise<DataChanges>;
  readonly onEvent: ((event: MdqClientEvent) => void) | undefined;
}

/** One walk: the query, its windows, and how its rows are checked, keyed and repaired. */
export interface WalkPlan<Row> {
  field: PageRequest["field"];
  query: string;
  variables: Record<string, unknown>;
  windows: DateWindow[];
  pageSize: number;
  concurrency: number;
  /** The walk's request count and deadline; its signal is the walk's. */
  limits: RunLimits;
  /** A page's raw rows, validated and typed (answer-validation.ts); throws SERVER_ANSWER_INVALID. */
  rowsOf: (raw: Record<string, unknown>[], window: DateWindow) => Row[];
  /** A unique key per row, when rows have one: a repeat within a window means the walk is torn. */
  keyOf?: (row: Row) => string;
  /**
   * For a records walk sorted by day alone, over every field, with no filter: the day of a row,
   * and the sort's direction. Such a walk that meets a load is repaired, not restarted.
   */
  repair?: { dateOf: (row: Row) => string; newestFirst: boolean };
}

/** A try of a window that met a load or came apart: why, and what it had fetched. */
export interface TornWindow<Row> {
  reason: string;
  /** The version of its page 1, and the other version a page reported (when that tore it). */
  fromVersion: string;
  toVersion?: string;
  pages: (Page<Row> | undefined)[];
}

/** The fetches of a walk (page-walk.ts), given to a repair so that it fetches as the walk does. */
export interface WindowFetchers {
  /** One page of a window, validated. */
  fetchPage<Row>(
    service: WalkService,
    plan: WalkPlan<Row>,
    index: number,
    page: number,
    signal: AbortSignal,
  ): Promise<Page<Row>>;
  /** One window, whole and consistent. */
  fetchWindow<Row>(
    service: WalkService,
    plan: WalkPlan<Row>,
    index: number,
    outer: AbortSignal,
  ): Promise<Page<Row>[]>;
}
