#!/usr/bin/env node
// Makes sure the machine has what the test suite drives besides Node: Debian's nginx, the load
// balancer of the scale-out tests (packages/cli/test/scale-out.test.ts). PostgreSQL and Redis are
// services of the machine (README, "Testing") and are checked by the tests that use them.
// On Debian as root, a missing nginx is installed from Debian's packages; anywhere else this
// stops with the command to run, rather than letting the tests fail later or skip.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const NGINX = "/usr/sbin/nginx";

if (!existsSync(NGINX)) {
  const canInstall = process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");
  if (!canInstall) {
    console.error(
      `ensure-test-tools: ${NGINX} is missing; install Debian's nginx (sudo apt-get install nginx-light)`,
    );
    process.exit(1);
  }
  console.error("ensure-test-tools: installing Debian's nginx-light for the scale-out tests");
  const install = () =>
    spawnSync("apt-get", ["install", "-y", "-q", "--no-install-recommends", "nginx-light"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    }).status === 0;
  if (!install()) {
    spawnSync("apt-get", ["update", "-q"], { stdio: "inherit" });
    if (!install()) {
      console.error("ensure-test-tools: apt-get could not install nginx-light");
      process.exit(1);
    }
  }
}
