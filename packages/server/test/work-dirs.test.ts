/**
 * Work directories (work-dirs.ts): named with their process's pid, and removed by a service that
 * starts when that process is gone (killed mid-load), never when it runs.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, it } from "node:test";
import { startTestRegion } from "@mdq/test-support";
import { makeWorkDir } from "../src/work-dirs.js";

/** Above Linux's largest pid (2^22): no process has it. */
const GONE_PID = 4_194_305;

describe("work directories", () => {
  it("are named with their purpose and this process's pid", async () => {
    const directory = await makeWorkDir("load");
    try {
      assert.match(basename(directory), new RegExp(`^mdq-load-${process.pid}-`));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("are removed by a service that starts when their process is gone, and kept while it runs", async () => {
    const suffix = `${Date.now()}-sweep`;
    const gone = join(tmpdir(), `mdq-upload-${GONE_PID}-${suffix}`);
    const alive = join(tmpdir(), `mdq-load-${process.pid}-${suffix}`);
    const other = join(tmpdir(), `mdq-loadtest-${GONE_PID}-${suffix}`);
    for (const directory of [gone, alive, other]) {
      await mkdir(directory);
      await writeFile(join(directory, "records.csv"), "left behind\n");
    }
    try {
      const region = await startTestRegion({ days: 1 });
      await region.close();
      assert.equal(existsSync(gone), false, "the directory of a process that is gone was removed");
      assert.equal(existsSync(alive), true, "the directory of a running process was kept");
      assert.equal(existsSync(other), true, "a directory not named as a work directory was kept");
    } finally {
      for (const directory of [gone, alive, other]) await rm(directory, { recursive: true, force: true });
    }
  });
});
