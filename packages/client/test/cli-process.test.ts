/** `mdq-client` as a process on its own: `--version`, and a stdout whose reader went away. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { runCli, startCli } from "./cli-region.js";

const env = { PATH: process.env.PATH };

describe("mdq-client as a process", () => {
  it("--version prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    assert.deepEqual(await runCli(["--version"], env), {
      code: 0,
      signal: null,
      stdout: `${version}\n`,
      stderr: "",
    });
  });

  it("prints help into a closed pipe (`| head -5`) without an EPIPE stack, and exits 0", async () => {
    const { child, done } = startCli(["sync", "--help"], env);
    child.stdout!.destroy();
    const run = await done;
    assert.equal(run.code, 0);
    assert.equal(run.stderr, "");
  });
});
