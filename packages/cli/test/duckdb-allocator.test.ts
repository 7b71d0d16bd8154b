/**
 * DuckDB's allocator in `mdq` processes (src/duckdb-allocator.cts): one jemalloc arena unless the
 * operator says otherwise, set in the environment before DuckDB loads, as bin/mdq.cjs does.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import {
  DUCKDB_MALLOC_CONF,
  MDQ_DUCKDB_MALLOC_CONF,
  provideDuckDbAllocator,
} from "../src/duckdb-allocator.cjs";

const run = promisify(execFile);
const allocatorModule = createRequire(import.meta.url).resolve("../src/duckdb-allocator.cjs");

/**
 * The jemalloc options DuckDB ran with in a fresh Node process that sets its environment the way
 * bin/mdq.cjs does (`provide`), opens DuckDB, runs a statement and exits: jemalloc prints them
 * as JSON at exit when `stats_print` is added to what the process set (its options omit every
 * section but the general one).
 */
async function allocatorOptions(
  operator: string | undefined,
  provide: boolean,
): Promise<Record<string, unknown>> {
  const script = `
    ${provide ? `require(${JSON.stringify(allocatorModule)}).provideDuckDbAllocator(process.env);` : ""}
    process.env.${DUCKDB_MALLOC_CONF} = [process.env.${DUCKDB_MALLOC_CONF}, "stats_print:true,stats_print_opts:Jmdablxe"]
      .filter(Boolean).join(",");
    const { DuckDBInstance } = require("@duckdb/node-api");
    (async () => {
      const connection = await (await DuckDBInstance.create(":memory:")).connect();
      await connection.run("SELECT 42");
    })();`;
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"] };
  if (operator !== undefined) env[DUCKDB_MALLOC_CONF] = operator;
  const { stderr } = await run(process.execPath, ["-e", script], {
    env,
    cwd: dirname(allocatorModule),
    maxBuffer: 16 * 1024 * 1024,
  });
  const stats = JSON.parse(stderr.slice(stderr.indexOf("{"))) as {
    jemalloc: { opt: Record<string, unknown> };
  };
  return stats.jemalloc.opt;
}

describe("DuckDB's allocator", () => {
  it("is given one arena when the operator sets nothing, and keeps an operator's options", () => {
    const unset: NodeJS.ProcessEnv = {};
    provideDuckDbAllocator(unset);
    assert.equal(unset[DUCKDB_MALLOC_CONF], MDQ_DUCKDB_MALLOC_CONF);
    for (const operator of ["narenas:4", ""]) {
      const env: NodeJS.ProcessEnv = { [DUCKDB_MALLOC_CONF]: operator };
      provideDuckDbAllocator(env);
      assert.equal(env[DUCKDB_MALLOC_CONF], operator);
    }
  });

  it("reaches DuckDB's jemalloc when set in the process before DuckDB loads", async () => {
    assert.equal((await allocatorOptions(undefined, true))["narenas"], 1);
    const built = await allocatorOptions(undefined, false);
    assert.notEqual(built["narenas"], 1, "DuckDB's own build already uses one arena: the setting is moot");
    assert.equal((await allocatorOptions("narenas:3", true))["narenas"], 3);
  });
});
