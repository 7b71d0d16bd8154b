#!/usr/bin/env node
// Adds the lock entries npm drops when the registry it reaches does not serve other platforms'
// binaries (here: Biome's @biomejs/cli-* for macOS, Windows, Android and musl). Without them
// `npm ci` refuses the lock ("Missing: @biomejs/cli-win32-x64 from lock file"); with them it
// skips those packages as it would on any Linux x64 machine. Run after every `npm install`
// that changes dependencies:   npm install && node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from "node:fs";

const LOCK = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, "utf8"));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const match = /-(android|darwin|linux|win32|freebsd)-(arm64|x64|arm|ia32)(-musl|-gnu)?$/.exec(name);
    if (!match)
      throw new Error(`${path} needs ${name}@${version}, which is missing and not a platform binary`);
    const [, os, cpu, libc] = match;
    packages[key] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc === "-musl" ? "musl" : "glibc"] } : {}),
      optional: true,
      os: [os],
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
