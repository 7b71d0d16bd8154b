/**
 * How DuckDB's allocator is set up in `mdq` processes. DuckDB allocates through its own jemalloc,
 * built with two arenas; the threads that run DuckDB statements (libuv's pool, one statement
 * each) are spread over both, and each arena keeps, for a second, the pages its statements freed.
 * Under 8 concurrent walks at scale 600 the served process peaked at 525–619 MB of RSS; with one
 * arena, at 490–495 MB, for the same CPU (bench/README.md, issue 17). Small allocations still go
 * through each thread's own cache, so one arena costs no contention worth measuring.
 *
 * jemalloc reads its options from `DUCKDB_JE_MALLOC_CONF` (its `MALLOC_CONF`, under DuckDB's
 * prefix) once, at DuckDB's first allocation: `bin/mdq.cjs` sets it before any module loads.
 */

/** The environment variable DuckDB's jemalloc reads its options from. */
export const DUCKDB_MALLOC_CONF = "DUCKDB_JE_MALLOC_CONF";

/** The options `mdq` gives DuckDB's jemalloc when the operator gives none. */
export const MDQ_DUCKDB_MALLOC_CONF = "narenas:1";

/**
 * Sets `DUCKDB_JE_MALLOC_CONF` in `env` to `MDQ_DUCKDB_MALLOC_CONF` when the operator did not set
 * it (an operator's value, even empty, is kept). Call before DuckDB loads.
 */
export function provideDuckDbAllocator(env: NodeJS.ProcessEnv): void {
  if (env[DUCKDB_MALLOC_CONF] !== undefined) return;
  env[DUCKDB_MALLOC_CONF] = MDQ_DUCKDB_MALLOC_CONF;
}
