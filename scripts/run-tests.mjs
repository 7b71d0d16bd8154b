#!/usr/bin/env node
// Runs every compiled test file (packages/*/dist/test/**/*.test.js) with Node's test runner.
// Listing the files explicitly keeps Node 20 and Node 24 (which would also pick up .ts files)
// running exactly the same set. A compiled test whose source is gone (renamed or split since the
// last clean build; tsc -b never deletes outputs) is left out, so no test runs twice.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function testFiles(directory) {
  const found = [];
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (entry.endsWith(".test.js")) found.push(path);
  }
  return found;
}

/** Whether `compiled` (packages/<name>/dist/test/….test.js) still has its .ts source. */
function hasSource(name, compiled) {
  const source = relative(join("packages", name, "dist"), compiled).replace(/\.js$/, ".ts");
  return existsSync(join("packages", name, source));
}

const files = ["contract", "server", "cli", "client"].flatMap((name) => {
  try {
    return testFiles(join("packages", name, "dist", "test")).filter((file) => hasSource(name, file));
  } catch {
    return [];
  }
});
if (files.length === 0) {
  console.error("no test files found: run `npm run build` first");
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--test", "--test-reporter=spec", ...process.argv.slice(2), ...files],
  {
    stdio: "inherit",
  },
);
process.exit(result.status ?? 1);
