#!/usr/bin/env node
// Runs every compiled test file (packages/*/dist/test/**/*.test.js) with Node's test runner.
// Listing the files explicitly keeps Node 20 and Node 24 (which would also pick up .ts files)
// running exactly the same set.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function testFiles(directory) {
  const found = [];
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (entry.endsWith(".test.js")) found.push(path);
  }
  return found;
}

const files = ["contract", "server", "cli", "client"].flatMap((name) => {
  try {
    return testFiles(join("packages", name, "dist", "test"));
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
