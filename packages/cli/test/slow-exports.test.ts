/**
 * Slow export clients cannot stall a DuckDB `mdq serve` (issue 18): each export whose client
 * stops reading holds a libuv thread (its DuckDB COPY waits on a full pipe), so the `mdq` binary
 * sizes the pool to a thread per export slot plus four, and `serve` refuses a pool too small for
 * `MDQ_EXPORT_CONCURRENCY`. Real processes: `mdq demo --seed-only`, then `mdq serve` as a child.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { type ClientRequest, type IncomingMessage, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { EXPORT_PATH } from "@mdq/contract";
import {
  type AppCredentials,
  daysAgo,
  graphqlCall,
  runMdq,
  type ServeProcess,
  startServe,
  tokenCall,
} from "@mdq/test-support";

/** A page of a month's records: DuckDB statements on pool threads (its facts, then its rows). */
const MONTH_PAGE =
  "query($c: ID!, $r: DateRangeInput!) { marketingRecords(clientId: $c, dateRange: $r, currency: EUR) { recordId date } }";

type DemoApp = AppCredentials & { brandClientId: string };

/** Starts an export whose body is never read: resolves with its response once the headers came. */
function unreadExport(
  url: string,
  token: string,
): Promise<{ request: ClientRequest; response: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { headers: { authorization: `Bearer ${token}` }, agent: false },
      (response) => {
        // No 'data' listener: the response stays paused, the socket's buffers fill, the COPY waits.
        resolve({ request: outgoing, response });
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("mdq serve with exports whose clients never read (DuckDB)", () => {
  let work: string;
  let dataDir: string;
  let serve: ServeProcess | undefined;
  let app: DemoApp;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-slow-exports-"));
    dataDir = join(work, "data");
    const credentialsFile = join(work, "credentials.json");
    // About 60,000 rows a brand: an NDJSON body (~18 MB) far beyond what the pipe and the
    // loopback socket's buffers hold, so each export's COPY blocks on its unread client.
    const seeded = await runMdq([
      "demo",
      "--seed-only",
      "--scale",
      "4",
      "--data",
      dataDir,
      "--credentials",
      credentialsFile,
    ]);
    assert.equal(seeded.code, 0, seeded.stderr);
    app = (JSON.parse(await readFile(credentialsFile, "utf8")) as { apps: DemoApp[] }).apps[0]!;
  });
  after(async () => {
    await serve?.stop("SIGKILL");
    await rm(work, { recursive: true, force: true });
  });

  it("answers GraphQL while every export slot holds a client that does not read", async () => {
    // One brand takes every slot here: by default it may hold one (MDQ_EXPORT_PER_BRAND).
    serve = await startServe(dataDir, { MDQ_EXPORT_PER_BRAND: "4" });
    const granted = await tokenCall(serve.url, app.appClientId, app.appClientSecret);
    assert.equal(granted.status, 200, granted.body);
    const token = (JSON.parse(granted.body) as { access_token: string }).access_token;
    const from = daysAgo(365);
    const to = daysAgo(1);
    const exportUrl = `${serve.url}${EXPORT_PATH}?clientId=${app.brandClientId}&from=${from}&to=${to}&format=ndjson`;
    // The default MDQ_EXPORT_CONCURRENCY: 4 slots, all taken.
    const exports = await Promise.all([1, 2, 3, 4].map(() => unreadExport(exportUrl, token)));
    try {
      assert.deepEqual(
        exports.map(({ response }) => response.statusCode),
        [200, 200, 200, 200],
      );
      // Give the COPYs time to fill their pipes and sockets and block.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // A liveness bound, not a timing assertion: a stalled pool never answers.
      const answer = await graphqlCall(
        serve.url,
        token,
        MONTH_PAGE,
        { c: app.brandClientId, r: { from: daysAgo(30), to } },
        {
          timeoutMs: 10_000,
        },
      );
      assert.equal(answer.status, 200, answer.body);
      const { data } = JSON.parse(answer.body) as { data: { marketingRecords: unknown[] } | null };
      assert.equal(data?.marketingRecords.length, 1000, answer.body);
      // The exports are still held by their clients, not finished.
      assert.deepEqual(
        exports.map(({ response }) => response.complete),
        [false, false, false, false],
      );
    } finally {
      for (const { request: outgoing } of exports) outgoing.destroy();
    }
  });

  it("refuses to start when UV_THREADPOOL_SIZE leaves no thread beside the export slots", async () => {
    const refused = await runMdq(["serve", "--port", "0", "--data", dataDir], {
      UV_THREADPOOL_SIZE: "4",
      MDQ_EXPORT_CONCURRENCY: "4",
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(
      refused.stderr,
      "mdq: UV_THREADPOOL_SIZE gives 4 libuv threads, but MDQ_EXPORT_CONCURRENCY=4 needs at least 8 (one per " +
        "export, whose DuckDB COPY holds a thread while its client reads, and 4 for everything else): set " +
        "UV_THREADPOOL_SIZE=8 or more (the mdq binary sets it when unset), or lower MDQ_EXPORT_CONCURRENCY\n",
    );
  });
});
