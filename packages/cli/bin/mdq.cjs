#!/usr/bin/env node
// The `mdq` binary. A committed file rather than dist/src/main.js itself: npm links a binary only
// when its target exists at install time, and the compiled entry point exists only after a build.
// CommonJS, so that UV_THREADPOOL_SIZE is set before the ES module loader first uses libuv's pool
// (src/thread-pool.cts).
require("../dist/src/thread-pool.cjs").provideThreadPool(process.env);
import("../dist/src/main.js");
