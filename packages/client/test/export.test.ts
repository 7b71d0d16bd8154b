/**
 * The export from the client's side (CONTRACT §7): `exportRecords()` and `mdq-client export`
 * against a real service, directly and through a proxy that cuts the connection mid-body: the
 * file is byte-identical to the service's own body, a text format resumes with `after=`, a binary
 * one starts again, and the rows are checked against `MDQ-Row-Count`.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { cliEnv, type RunningService, runCli, startService } from "@mdq/test-support";
import { MdqClient } from "../src/index.js";

/** A proxy to `target` that cuts each of the first `cuts` export answers after `afterBytes` body bytes. */
async function cuttingProxy(
  target: string,
  afterBytes: number,
): Promise<{ url: string; cuts: number[]; server: Server; setCuts(n: number): void }> {
  const cuts: number[] = [];
  let left = 0;
  const server = createServer((request, response) => {
    const upstream = httpRequest(
      `${target}${request.url}`,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        const cut = request.url!.startsWith("/export/") && answer.statusCode === 200 && left > 0;
        if (cut) left -= 1;
        let sent = 0;
        answer.on("data", (chunk: Buffer) => {
          if (!cut) return void response.write(chunk);
          // Chunks the parser had already read when the answer was cut: nothing more is sent.
          if (sent >= afterBytes) return;
          if (sent + chunk.length >= afterBytes) {
            cuts.push(afterBytes);
            answer.destroy();
            // Cut once the part before the cut has reached the socket: a break mid-body.
            response.write(chunk.subarray(0, afterBytes - sent), () => response.socket?.destroy());
            sent = afterBytes;
            return;
          }
          sent += chunk.length;
          response.write(chunk);
        });
        answer.on("end", () => response.end());
      },
    );
    request.pipe(upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts,
    server,
    setCuts: (n) => {
      left = n;
    },
  };
}

describe("the export from the client", () => {
  let region: RunningService;
  let work: string;
  let from: string;
  let to: string;

  /** The service's own body of an export, read directly. */
  async function direct(format: string): Promise<Buffer> {
    const client = new MdqClient(region.clientOptions());
    const response = await client.openExport({ from, to }, format as "ndjson");
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.body) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  before(async () => {
    region = await startService({ days: 60, scale: 3 });
    work = await mkdtemp(join(tmpdir(), "mdq-client-export-"));
    from = region.firstDay;
    to = region.lastDay;
  });
  after(async () => {
    await region.close();
    await rm(work, { recursive: true, force: true });
  });

  it("exportRecords yields every record once, in (date, recordId) order, resuming across cut connections", async () => {
    const lines = (await direct("ndjson")).toString("utf8").trimEnd().split("\n");
    const proxy = await cuttingProxy(region.url, 64 * 1024 + 17);
    try {
      proxy.setCuts(2);
      const events: string[] = [];
      const client = new MdqClient({
        ...region.clientOptions({ via: proxy.url }),
        onEvent: (event) => events.push(event.type),
      });
      const records = [];
      for await (const record of client.exportRecords({ from, to })) records.push(record);
      assert.equal(proxy.cuts.length, 2);
      assert.deepEqual(
        records.map((record) => JSON.stringify(record)),
        lines,
      );
      assert.ok(events.includes("retry"));
    } finally {
      proxy.server.close();
    }
  });

  for (const format of ["ndjson", "csv", "parquet", "arrow"]) {
    it(`mdq-client export --format ${format} writes the service's bytes, through cut connections too`, async () => {
      const expected = await direct(format);
      const out = join(work, `plain.${format}`);
      const plain = await runCli(
        ["export", "--from", from, "--to", to, "--format", format, "--out", out],
        cliEnv(region),
      );
      assert.equal(plain.code, 0, plain.stderr);
      assert.ok((await readFile(out)).equals(expected));
      assert.equal(existsSync(`${out}.partial`), false);
      assert.match(plain.stderr, /exported [\d,]+ rows/);

      const proxy = await cuttingProxy(region.url, 50_000);
      try {
        proxy.setCuts(2);
        const cutOut = join(work, `cut.${format}`);
        const run = await runCli(
          ["export", "--from", from, "--to", to, "--format", format, "--out", cutOut],
          cliEnv(region, { overrides: { MDQ_BASE_URL: proxy.url } }),
        );
        assert.equal(run.code, 0, run.stderr);
        assert.equal(proxy.cuts.length, 2);
        assert.ok((await readFile(cutOut)).equals(expected), "the file equals the uncut body");
        assert.match(
          run.stderr,
          format === "ndjson" || format === "csv"
            ? /resuming after the last whole row/
            : /starting the file again/,
        );
      } finally {
        proxy.server.close();
      }
    });
  }

  it("mdq-client export --format csv keeps the header when the connection breaks before any whole row", async () => {
    const expected = await direct("csv");
    // 10 bytes of the gzip body: not even the header line reaches the client before the break.
    const proxy = await cuttingProxy(region.url, 10);
    try {
      proxy.setCuts(1);
      const out = join(work, "early-cut.csv");
      const run = await runCli(
        ["export", "--from", from, "--to", to, "--format", "csv", "--out", out],
        cliEnv(region, { overrides: { MDQ_BASE_URL: proxy.url } }),
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(proxy.cuts.length, 1);
      assert.ok((await readFile(out)).equals(expected), "the file equals the uncut body");
    } finally {
      proxy.server.close();
    }
  });

  it("refuses a range the service refuses, with its code and exit status", async () => {
    const run = await runCli(
      ["export", "--from", "2024-01-01", "--to", "2025-06-30", "--out", join(work, "long.ndjson")],
      cliEnv(region),
    );
    assert.equal(run.code, 7, run.stderr);
    assert.match(run.stderr, /DATE_RANGE_TOO_LONG/);
  });
});
