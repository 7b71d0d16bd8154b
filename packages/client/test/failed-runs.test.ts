/**
 * A run that fails before its first byte leaves nothing on disk (issue 57): `export`, `sync` and
 * `mirror` refused by the token endpoint (a wrong secret), or by the service (403 for a market
 * outside the grants), exit with their code and leave no output file, no `FILE.partial` and no
 * checkpoint behind.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cliEnv, type RunningService, runCli, startService } from "@mdq/test-support";

describe("a run that fails before its first byte", { timeout: 120_000 }, () => {
  let region: RunningService;
  let work: string;

  before(async () => {
    region = await startService({ days: 3 });
    work = await mkdtemp(join(tmpdir(), "mdq-client-failed-"));
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });

  const wrongSecret = () =>
    cliEnv(region, { overrides: { MDQ_APP_CLIENT_SECRET: "not-the-secret-0123456789" } });
  /** app-acme-uk may read GB only: a filter naming DE is refused with 403. */
  const narrowApp = () => cliEnv(region, { appIndex: 1 });

  for (const [name, env, extra, code] of [
    ["a wrong secret", wrongSecret, [], 4],
    ["a market outside the grants (403)", narrowApp, ["--markets", "DE"], 5],
  ] as const) {
    it(`export, sync and mirror leave nothing on disk after ${name}`, async () => {
      const range = ["--from", region.lastDay, "--to", region.lastDay];
      const runs = [
        { command: "export", format: "csv" },
        { command: "export", format: "parquet" },
        { command: "sync", format: "csv" },
        { command: "sync", format: "parquet" },
        // mirror takes no filter: every market of the grants.
        ...(extra.length === 0 ? [{ command: "mirror", format: "csv" }] : []),
      ];
      for (const { command, format } of runs) {
        const dir = join(work, `${command}-${format}-${code}`);
        await mkdir(dir);
        const target =
          command === "mirror" ? ["--dir", join(dir, "mirror")] : ["--out", join(dir, `out.${format}`)];
        const result = await runCli([command, ...range, "--format", format, ...target, ...extra], env());
        assert.equal(result.code, code, `${command} ${format}: ${result.stderr}`);
        assert.deepEqual(
          await readdir(dir, { recursive: true }),
          [],
          `${command} ${format} left files behind`,
        );
      }
    });
  }
});
