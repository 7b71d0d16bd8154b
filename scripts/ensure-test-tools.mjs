#!/usr/bin/env node
// Makes sure the machine has what the test suite drives besides Node: Debian's nginx, the load
// balancer of the scale-out tests (packages/cli/test/scale-out.test.ts), and Debian's chromium,
// the browser of the GraphiQL explorer test (packages/server/test/graphql-explorer.browser.test.ts),
// and Debian's pgbouncer, the transaction pooler of the read-replica tests (packages/server/test/read-replicas.test.ts).
// The replica tests also run PostgreSQL's own initdb, pg_basebackup and pg_ctl (the server's package).
// PostgreSQL and Redis are services of the machine (README, "Testing") and are checked by the
// tests that use them. On Debian as root, a missing tool is installed from Debian's packages;
// anywhere else this stops with the command to run, rather than letting the tests fail later or skip.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const TOOLS = [
  { path: "/usr/sbin/nginx", debianPackage: "nginx-light", usedBy: "the scale-out tests" },
  { path: "/usr/bin/chromium", debianPackage: "chromium", usedBy: "the GraphiQL explorer test" },
  { path: "/usr/sbin/pgbouncer", debianPackage: "pgbouncer", usedBy: "the read-replica tests" },
];

function ensure({ path, debianPackage, usedBy }) {
  if (existsSync(path)) return;
  const canInstall = process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");
  if (!canInstall) {
    console.error(
      `ensure-test-tools: ${path} is missing; install Debian's ${debianPackage} (sudo apt-get install ${debianPackage})`,
    );
    process.exit(1);
  }
  console.error(`ensure-test-tools: installing Debian's ${debianPackage} for ${usedBy}`);
  const install = () =>
    spawnSync("apt-get", ["install", "-y", "-q", "--no-install-recommends", debianPackage], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    }).status === 0;
  if (!install()) {
    spawnSync("apt-get", ["update", "-q"], { stdio: "inherit" });
    if (!install()) {
      console.error(`ensure-test-tools: apt-get could not install ${debianPackage}`);
      process.exit(1);
    }
  }
}

for (const tool of TOOLS) ensure(tool);
