import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { runMdq } from "./support/service-process.js";

describe("mdq serve on a taken port", () => {
  let work: string;
  let database: TestDatabase;
  let holder: Server;
  let port: number;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-serve-"));
    database = await createTestDatabase("serve_taken");
    assert.equal((await runMdq(["migrate"], { MDQ_DATABASE_URL: database.url() })).code, 0);
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as { port: number }).port;
  });

  after(async () => {
    await new Promise((resolve) => holder.close(resolve));
    await database.drop();
    await rm(work, { recursive: true, force: true });
  });

  it("exits 1 within seconds with PostgreSQL and Redis, naming EADDRINUSE, and never uses the closed pool", {
    timeout: 30_000,
  }, async () => {
    const started = Date.now();
    const result = await runMdq(["serve", "--host", "127.0.0.1", "--port", String(port), "--data", work], {
      MDQ_DATABASE_URL: database.url(),
      MDQ_REDIS_URL: "redis://127.0.0.1:6379",
      // A reload every second would hit the closed pool if the key-ring timer survived the failure.
      MDQ_LOG_LEVEL: "info",
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^mdq: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+$/m);
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.doesNotMatch(result.stdout + result.stderr, /Cannot use a pool after calling end/);
  });
});
