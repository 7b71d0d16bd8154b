/**
 * The client against a malicious server (issue 20): every answer is validated before anything is
 * written, paths never leave `--dir`, the mirror removes only what it wrote, bodies and runs are
 * bounded, and CSV cells are safe to open in a spreadsheet. Each case runs `mdq-client` as a
 * process (or the SDK) against a real HTTP server that lies.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "@mdq/test-support";
import { pathInside } from "../../src/contained-paths.js";
import { MdqClient, MdqClientError } from "../../src/index.js";
import {
  changesAnswer,
  exportAnswer,
  type HostileRequest,
  hostileEnv,
  record,
  recordsAnswer,
  startHostileServer,
} from "./hostile-server.js";

const DAY = "2024-01-01";

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), "mdq-hostile-"));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A fresh directory under the test's work directory. */
async function fresh(name: string): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Serves changes listing `dates` and, for records, two good rows per asked day. */
function honestFor(dates: () => string[], rows = (date: string) => [record(date, 1), record(date, 2)]) {
  return (request: HostileRequest) => {
    if (request.field === "marketingDataChanges") return changesAnswer(dates());
    const range = request.variables["dateRange"] as { from: string; to: string };
    const inRange = dates().filter((date) => date >= range.from && date <= range.to);
    return recordsAnswer(inRange.flatMap(rows));
  };
}

describe("mdq-client mirror against a server that lists paths as days", () => {
  const TRAVERSALS: [string, string][] = [
    ["..", "2024-01-01/../../brand-b/date=2024-01-01"],
    ["deep ..", "x/../../../victim"],
    ["absolute", "/tmp/mdq-hostile-absolute"],
    ["NUL", "2024-01-01\u0000"],
    ["backslash", "2024-01-01\\..\\..\\victim"],
    ["percent-encoded", "2024-01-01%2F..%2F..%2Fvictim"],
  ];
  for (const [form, date] of TRAVERSALS) {
    it(`refuses a listed day with ${form} (exit 8, SERVER_ANSWER_INVALID) and touches no file`, async () => {
      const root = await fresh(`traversal-${form.replace(/\W/g, "-")}`);
      const victim = join(root, "victim", "records.parquet");
      const other = join(root, "brand-b", "date=2024-01-01", "records.parquet");
      for (const file of [victim, other]) {
        await mkdir(join(file, ".."), { recursive: true });
        await writeFile(file, "another mirror's file");
      }
      const dir = join(root, "mirrors", "brand-a");
      const server = await startHostileServer(honestFor(() => [date]));
      try {
        const run = await runCli(
          ["mirror", "--dir", dir, "--from", DAY, "--to", "2024-01-31", "--format", "csv"],
          hostileEnv(server),
        );
        assert.equal(run.code, 8, run.stderr);
        assert.match(run.stderr, /marketingDataChanges is invalid at days\.0\.date/);
        assert.equal(await readFile(victim, "utf8"), "another mirror's file");
        assert.equal(await readFile(other, "utf8"), "another mirror's file");
        // Nothing written, the lock released, and the directories the run made removed.
        assert.equal(existsSync(join(root, "mirrors")), false);
        assert.equal(
          server.requests.some((request) => request.field === "marketingRecords"),
          false,
        );
      } finally {
        await server.close();
      }
    });
  }

  it("builds paths only inside the directory: pathInside refuses every traversal form", () => {
    for (const segment of [
      "..",
      ".",
      "a/../../b",
      "/etc/passwd",
      "a\u0000",
      "a\\..\\b",
      "%2e%2e",
      "date=%2F",
      "",
    ]) {
      assert.throws(
        () => pathInside("/srv/mirror", [segment]),
        (error: unknown) => error instanceof MdqClientError && error.code === "SERVER_ANSWER_INVALID",
        JSON.stringify(segment),
      );
    }
    assert.equal(
      pathInside("/srv/mirror", ["date=2024-01-01", "records.csv"]),
      "/srv/mirror/date=2024-01-01/records.csv",
    );
  });
});

describe("mdq-client mirror removes only what it wrote", () => {
  it("refuses a first run into a non-empty directory that is not a mirror (exit 9) unless --force, and never removes its files", async () => {
    const dir = await fresh("not-a-mirror");
    const foreign = [
      join(dir, "date=2020-01-01", "sales.parquet"),
      join(dir, "date=2024-01-01", "sales.parquet"),
    ];
    for (const file of foreign) {
      await mkdir(join(file, ".."), { recursive: true });
      await writeFile(file, "the owner's data");
    }
    const server = await startHostileServer(honestFor(() => [DAY]));
    try {
      const args = ["mirror", "--dir", dir, "--from", DAY, "--to", "2024-01-31", "--format", "csv"];
      const refused = await runCli(args, hostileEnv(server));
      assert.equal(refused.code, 9, refused.stderr);
      assert.match(refused.stderr, /is not empty and holds no _mdq_mirror\.json/);
      assert.equal(server.requests.length, 0);
      const forced = await runCli([...args, "--force"], hostileEnv(server));
      assert.equal(forced.code, 0, forced.stderr);
      for (const file of foreign) assert.equal(await readFile(file, "utf8"), "the owner's data");
      assert.ok(existsSync(join(dir, "date=2024-01-01", "records.csv")));
    } finally {
      await server.close();
    }
  });

  it("refuses an empty listing for a mirror that holds rows (exit 9) unless --allow-empty, which removes only its own files", async () => {
    const dir = await fresh("emptied");
    let listed = [DAY, "2024-01-02"];
    const server = await startHostileServer(honestFor(() => listed));
    try {
      const args = ["mirror", "--dir", dir, "--from", DAY, "--to", "2024-01-31", "--format", "csv"];
      assert.equal((await runCli(args, hostileEnv(server))).code, 0);
      await writeFile(join(dir, "date=2024-01-01", "notes.txt"), "mine");
      listed = [];
      const refused = await runCli(args, hostileEnv(server));
      assert.equal(refused.code, 9, refused.stderr);
      assert.match(refused.stderr, /--allow-empty/);
      assert.ok(existsSync(join(dir, "date=2024-01-01", "records.csv")));
      const allowed = await runCli([...args, "--allow-empty"], hostileEnv(server));
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.deepEqual((await readdir(dir)).sort(), ["_mdq_mirror.json", "date=2024-01-01"]);
      assert.deepEqual(await readdir(join(dir, "date=2024-01-01")), ["notes.txt"]);
    } finally {
      await server.close();
    }
  });
});

describe("mdq-client mirror validates what the listing and the records say", () => {
  const CASES: [string, () => string[], ((date: string) => Record<string, unknown>[]) | undefined, RegExp][] =
    [
      ["a day outside --from/--to", () => [DAY, "2023-12-31"], undefined, /outside the asked range/],
      ["a day listed three times", () => [DAY, DAY, DAY], undefined, /lists a day twice or out of order/],
      [
        "an object where a campaign name belongs",
        () => [DAY],
        (date) => [record(date, 1, { campaignName: { toString: "x" } })],
        /marketingRecords rows is invalid at 0\.campaignName/,
      ],
      ["null spend", () => [DAY], (date) => [record(date, 1, { spend: null })], /at 0\.spend/],
    ];
  for (const [what, dates, rows, message] of CASES) {
    it(`refuses ${what} (exit 8) and writes no day`, async () => {
      const dir = await fresh(`validate-${what.replace(/\W/g, "-")}`);
      const server = await startHostileServer(honestFor(dates, rows));
      try {
        const run = await runCli(
          ["mirror", "--dir", dir, "--from", DAY, "--to", "2024-01-31", "--format", "ndjson"],
          hostileEnv(server),
        );
        assert.equal(run.code, 8, run.stderr);
        assert.match(run.stderr, message);
        assert.deepEqual(await readdir(dir), []);
      } finally {
        await server.close();
      }
    });
  }
});

describe("bounded reads against a server that lies about sizes", () => {
  it("stops an answer that never ends at maxBodyBytes, at once and without retrying", async () => {
    let stopped = false;
    const server = await startHostileServer(() => (response: import("node:http").ServerResponse) => {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!stopped && response.write(chunk)) {}
        if (!stopped) response.once("drain", pump);
      };
      response.on("close", () => {
        stopped = true;
      });
      pump();
    });
    try {
      const client = new MdqClient({
        ...clientOf(server.url),
        maxBodyBytes: 4 * 1024 * 1024,
      });
      const startedAt = Date.now();
      await assert.rejects(client.readiness(DAY), (error: unknown) => {
        assert.ok(error instanceof MdqClientError);
        assert.equal(error.code, "SERVER_ANSWER_INVALID");
        assert.match(error.message, /larger than maxBodyBytes/);
        return true;
      });
      assert.ok(Date.now() - startedAt < 10_000);
      assert.equal(server.requests.length, 1, "not retried");
    } finally {
      stopped = true;
      await server.close();
    }
  });

  it("ends a walk whose totalCount is 1e308 with empty pages (SERVER_ANSWER_INVALID), and sync releases its lock (exit 8)", async () => {
    const server = await startHostileServer((request) => {
      const { page, pageSize } = request.variables["pagination"] as { page: number; pageSize: number };
      return {
        data: { marketingRecords: [] },
        extensions: {
          pageInfo: {
            marketingRecords: { page, pageSize, totalCount: 1e308, hasNextPage: true, dataVersion: "uk.5" },
          },
        },
      };
    });
    try {
      const client = new MdqClient(clientOf(server.url));
      await assert.rejects(
        (async () => {
          for await (const _ of client.records({ from: DAY, to: DAY })) {
          }
        })(),
        (error: unknown) => error instanceof MdqClientError && error.code === "SERVER_ANSWER_INVALID",
      );
      assert.equal(server.requests.length, 1);
      const out = join(await fresh("lying-sync"), "records.csv");
      const run = await runCli(
        ["sync", "--from", DAY, "--to", DAY, "--out", out, "--quiet"],
        hostileEnv(server),
      );
      assert.equal(run.code, 8, run.stderr);
      assert.equal(existsSync(`${out}.lock`), false, "the lock is released");
      assert.equal(existsSync(out), false);
    } finally {
      await server.close();
    }
  });

  it("ends a walk that needs more requests than its range allows, however consistent its pages look", async () => {
    const server = await startHostileServer((request) => {
      const { page, pageSize } = request.variables["pagination"] as { page: number; pageSize: number };
      const rows = Array.from({ length: pageSize }, (_, index) => record(DAY, (page - 1) * pageSize + index));
      return {
        data: { marketingRecords: rows },
        extensions: {
          pageInfo: {
            marketingRecords: {
              page,
              pageSize,
              totalCount: 1_000_000_000,
              hasNextPage: true,
              dataVersion: "uk.5",
            },
          },
        },
      };
    });
    try {
      const client = new MdqClient({ ...clientOf(server.url), maxRequestsPerDay: 5 });
      await assert.rejects(
        (async () => {
          for await (const _ of client.records({ from: DAY, to: DAY, pageSize: 1000 })) {
          }
        })(),
        (error: unknown) =>
          error instanceof MdqClientError &&
          error.code === "SERVER_ANSWER_INVALID" &&
          /more than 25 requests/.test(error.message),
      );
      assert.ok(server.requests.length <= 25, `${server.requests.length} requests`);
    } finally {
      await server.close();
    }
  });
});

describe("sync and mirror against a lying export", () => {
  const good = [record(DAY, 1), record(DAY, 2), record(DAY, 3)];
  const LIES: [string, ReturnType<typeof exportAnswer>, RegExp][] = [
    [
      "fewer rows than MDQ-Row-Count",
      exportAnswer(good.slice(0, 2), { rowCount: 3 }),
      /says 3 rows, its body held 2/,
    ],
    ["more rows than MDQ-Row-Count", exportAnswer(good, { rowCount: 2 }), /says 2 rows, its body holds more/],
    [
      "a row outside the asked range",
      exportAnswer([record("2023-12-31", 1), ...good]),
      /outside the asked range 2024-01-01\.\.2024-01-01/,
    ],
    ["rows out of order", exportAnswer([good[1]!, good[0]!, good[2]!]), /does not come after/],
    ["a row twice", exportAnswer([good[0]!, good[0]!, good[1]!]), /does not come after/],
    ["a field of the wrong type", exportAnswer([record(DAY, 1, { clicks: "10" })]), /at 0\.clicks/],
    [
      "more rows than the range's requests could read",
      exportAnswer(good, { rowCount: 1_000_000_000 }),
      /announces 1000000000 rows/,
    ],
    [
      "a body larger than its rows may take",
      exportAnswer([], {
        rowCount: 1,
        body: `${JSON.stringify(record(DAY, 1, { campaignName: "x".repeat(200_000) }))}\n`,
      }),
      /larger than the 65536 bytes its 1 rows may take/,
    ],
  ];
  for (const [lie, answer, message] of LIES) {
    it(`refuses ${lie} with SERVER_ANSWER_INVALID (exit 8), writes nothing and releases its lock`, async () => {
      const server = await startHostileServer(
        honestFor(() => [DAY]),
        answer,
      );
      try {
        const dir = await fresh(`lying-export-${lie.replaceAll(" ", "-").replaceAll("'", "")}`);
        const env = hostileEnv(server, { MDQ_CLIENT_MAX_ANSWER_BYTES: "65536" });
        const out = join(dir, "records.csv");
        const synced = await runCli(["sync", "--from", DAY, "--to", DAY, "--out", out, "--quiet"], env);
        assert.equal(synced.code, 8, synced.stderr);
        assert.match(synced.stderr, /SERVER_ANSWER_INVALID/);
        assert.match(synced.stderr, message);
        assert.equal(existsSync(out), false);
        assert.equal(existsSync(`${out}.lock`), false, "the lock is released");
        const mirrorDir = join(dir, "mirror");
        const mirrored = await runCli(["mirror", "--dir", mirrorDir, "--from", DAY, "--to", DAY], env);
        assert.equal(mirrored.code, 8, mirrored.stderr);
        assert.match(mirrored.stderr, message);
        assert.equal(existsSync(join(mirrorDir, `date=${DAY}`, "records.csv")), false);
        assert.equal(server.exports.length, 2, "each run asked the export once, and never retried a lie");
        assert.equal(
          server.requests.filter((request) => request.field === "marketingRecords").length,
          0,
          "no page walk instead",
        );
      } finally {
        await server.close();
      }
    });
  }

  it("walks GraphQL pages when the service has no export (404), asking for it once per run", async () => {
    const NEXT = "2024-01-02";
    const server = await startHostileServer(honestFor(() => [DAY, NEXT]));
    try {
      const out = join(await fresh("no-export"), "records.ndjson");
      const synced = await runCli(
        ["sync", "--from", DAY, "--to", NEXT, "--window-days", "1", "--out", out],
        hostileEnv(server),
      );
      assert.equal(synced.code, 0, synced.stderr);
      assert.match(synced.stderr, /no bulk export \(HTTP 404\); walking GraphQL pages from 2024-01-01/);
      const ids = (await readFile(out, "utf8"))
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as { recordId: string }).recordId);
      assert.deepEqual(ids, [`r-${DAY}-1`, `r-${DAY}-2`, `r-${NEXT}-1`, `r-${NEXT}-2`]);
      assert.equal(server.exports.length, 1);
    } finally {
      await server.close();
    }
  });
});

describe("CSV cells safe to open in a spreadsheet", () => {
  const NAMES = [
    '=HYPERLINK("http://evil.example","x")',
    "+cmd|' /C calc'!A0",
    "@SUM(1,2)",
    "-2+3",
    "\tTabbed",
  ];
  const rows = (date: string) =>
    NAMES.map((name, index) =>
      record(date, index, { campaignName: name, spend: -3.5, campaignId: `=c${index}` }),
    );

  for (const via of ["the export", "the page walk"]) {
    it(`sync and mirror prefix formula-like text cells with ', never numbers, through ${via}; --raw-csv and NDJSON keep values exactly`, async () => {
      const server = await startHostileServer(
        honestFor(() => [DAY], rows),
        ...(via === "the export" ? [exportAnswer(rows(DAY))] : []),
      );
      try {
        const dir = await fresh(`csv-cells-${via.replaceAll(" ", "-")}`);
        const out = join(dir, "records.csv");
        const synced = await runCli(
          ["sync", "--from", DAY, "--to", DAY, "--out", out, "--quiet"],
          hostileEnv(server),
        );
        assert.equal(synced.code, 0, synced.stderr);
        const mirrored = await runCli(
          ["mirror", "--dir", join(dir, "mirror"), "--from", DAY, "--to", DAY, "--format", "csv"],
          hostileEnv(server),
        );
        assert.equal(mirrored.code, 0, mirrored.stderr);
        for (const file of [out, join(dir, "mirror", `date=${DAY}`, "records.csv")]) {
          const text = await readFile(file, "utf8");
          assert.ok(text.includes(`"'=HYPERLINK(""http://evil.example"",""x"")"`), text);
          assert.ok(text.includes("'+cmd|' /C calc'!A0"));
          assert.ok(text.includes(",'@SUM(1,2),") || text.includes(`"'@SUM(1,2)"`));
          assert.ok(text.includes(",'-2+3,"));
          assert.ok(text.includes(",'\tTabbed,"));
          assert.ok(text.includes(",'=c0,"));
          assert.ok(text.includes(",-3.5,"), "numbers are never prefixed");
          assert.equal(/,'-3\.5/.test(text), false);
        }
        const rawOut = join(dir, "raw.csv");
        const raw = await runCli(
          ["sync", "--from", DAY, "--to", DAY, "--out", rawOut, "--quiet", "--raw-csv"],
          hostileEnv(server),
        );
        assert.equal(raw.code, 0, raw.stderr);
        const rawText = await readFile(rawOut, "utf8");
        assert.ok(rawText.includes(",+cmd|' /C calc'!A0,") && !rawText.includes("'+cmd"));
        const ndjsonOut = join(dir, "records.ndjson");
        assert.equal(
          (
            await runCli(
              ["sync", "--from", DAY, "--to", DAY, "--out", ndjsonOut, "--quiet"],
              hostileEnv(server),
            )
          ).code,
          0,
        );
        const names = (await readFile(ndjsonOut, "utf8"))
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line).campaignName);
        assert.deepEqual(names, NAMES);
        assert.equal(
          server.requests.some((request) => request.field === "marketingRecords"),
          via === "the page walk",
        );
      } finally {
        await server.close();
      }
    });
  }
});

/** SDK options for `url`, with the ids `hostileEnv` uses. */
function clientOf(url: string) {
  return {
    appClientId: "app-acme-analytics",
    appClientSecret: "hostile-test-secret",
    brandClientId: "brand-acme",
    authUrl: url,
    baseUrl: url,
    maxAttempts: 6,
    backoffBaseMs: 1,
    backoffCapMs: 2,
  };
}
