#!/usr/bin/env node
// The `mdq` binary. A committed file rather than dist/src/main.js itself: npm links a binary only
// when its target exists at install time, and the compiled entry point exists only after a build.
// CommonJS, so that the environment libuv and DuckDB read once is set before the ES module loader
// first uses libuv's pool and before DuckDB loads (src/thread-pool.cts, src/duckdb-allocator.cts).
require("../dist/src/thread-pool.cjs").provideThreadPool(process.env);
require("../dist/src/duckdb-allocator.cjs").provideDuckDbAllocator(process.env);
import("../dist/src/main.js");
