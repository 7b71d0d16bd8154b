/**
 * The libuv thread pool `mdq serve` and `mdq demo` need. DuckDB's node API runs every statement on
 * a pool thread, and a bulk export's `COPY` into its pipe holds its thread for as long as the
 * export's client takes to read (docs/architecture.md "Bulk export"): with the pool of libuv's
 * default size (4) and the default 4 export slots, four slow clients would stall every other
 * DuckDB statement, GraphQL's included. So the pool holds a thread per export slot plus
 * `THREADS_BESIDE_EXPORTS`.
 *
 * libuv sizes the pool from `UV_THREADPOOL_SIZE` once, when the pool is first used, and Node's
 * ES module loader uses it to read the first module: the variable must be in the environment
 * before any ES module loads. Hence CommonJS: `bin/mdq.cjs` calls `provideThreadPool` first, and
 * `serve`/`demo` refuse to start (`requireThreadPool`) when the pool the process got is too small.
 */

/** Threads kept for everything but blocked exports: page reads, loads, file and DNS work. */
export const THREADS_BESIDE_EXPORTS = 4;
/** libuv's pool size when `UV_THREADPOOL_SIZE` is unset, and the largest it accepts. */
const LIBUV_DEFAULT_THREADS = 4;
const LIBUV_MAX_THREADS = 1024;
/** `MDQ_EXPORT_CONCURRENCY`'s default (packages/server/src/config.ts). */
const DEFAULT_EXPORT_CONCURRENCY = 4;

/** The pool size libuv takes from `env` (its `atoi`: 0 is 1, above 1024 is 1024). */
export function threadPoolSize(env: NodeJS.ProcessEnv): number {
  const text = env["UV_THREADPOOL_SIZE"];
  if (text === undefined || text === "") return LIBUV_DEFAULT_THREADS;
  const threads = Number.parseInt(text, 10);
  if (Number.isNaN(threads)) return 1;
  return Math.min(Math.max(threads, 1), LIBUV_MAX_THREADS);
}

/** The pool `exportConcurrency` export slots need. */
export function threadsNeeded(exportConcurrency: number): number {
  return exportConcurrency + THREADS_BESIDE_EXPORTS;
}

/**
 * Sets `UV_THREADPOOL_SIZE` in `env` when the operator did not: a thread per export slot
 * (`MDQ_EXPORT_CONCURRENCY`, read leniently here: a bad value is refused by the configuration
 * later) plus `THREADS_BESIDE_EXPORTS`. Call before any ES module loads.
 */
export function provideThreadPool(env: NodeJS.ProcessEnv): void {
  if (env["UV_THREADPOOL_SIZE"] !== undefined) return;
  const configured = Number(env["MDQ_EXPORT_CONCURRENCY"] || DEFAULT_EXPORT_CONCURRENCY);
  const slots = Number.isInteger(configured) && configured >= 1 ? configured : DEFAULT_EXPORT_CONCURRENCY;
  env["UV_THREADPOOL_SIZE"] = String(Math.min(threadsNeeded(slots), LIBUV_MAX_THREADS));
}

/**
 * Why this process's pool cannot serve `exportConcurrency` exports beside GraphQL, or null when
 * it can. `env` is the process's environment as it started (libuv read it then).
 */
export function threadPoolProblem(exportConcurrency: number, env: NodeJS.ProcessEnv): string | null {
  const threads = threadPoolSize(env);
  const needed = threadsNeeded(exportConcurrency);
  if (threads >= needed) return null;
  return (
    `UV_THREADPOOL_SIZE gives ${threads} libuv threads, but MDQ_EXPORT_CONCURRENCY=${exportConcurrency} needs at ` +
    `least ${needed} (one per export, whose DuckDB COPY holds a thread while its client reads, and ` +
    `${THREADS_BESIDE_EXPORTS} for everything else): set UV_THREADPOOL_SIZE=${needed} or more (the mdq binary ` +
    `sets it when unset), or lower MDQ_EXPORT_CONCURRENCY`
  );
}
