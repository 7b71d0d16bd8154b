/**
 * Scale-out (docs/deployment.md): three `mdq serve` processes on one PostgreSQL database and one
 * Redis, behind Debian's nginx. One rate-limit budget across all instances, tokens valid on every
 * instance, revocations and key rotations reaching all, the limit keyed on the real client address
 * through the proxy, and each fault injected for real: PostgreSQL unreachable and slow, Redis
 * unreachable, an instance killed under load, SIGTERM draining in-flight requests.
 *
 * PostgreSQL and Redis are reached through TCP gates (@mdq/test-support's tcp-gate.ts) so a test can cut
 * them off from the service without stopping the machine's servers that other tests use.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  connectTo,
  createTestDatabase,
  daysAgo,
  freePort,
  graphqlCall,
  httpCall,
  type Nginx,
  POSTGRES_HOST,
  POSTGRES_PORT,
  runMdq,
  type ServeProcess,
  startNginx,
  startServe,
  startTcpGate,
  type TcpGate,
  type TestDatabase,
  tokenCall,
} from "@mdq/test-support";

const RATE_LIMIT = 100;
const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";

/** Asks the instance at `url` for the readiness of `app`'s brand (`options`: client address, headers). */
function readinessOf(
  url: string,
  token: string,
  app: { brandClientId: string },
  options?: Parameters<typeof graphqlCall>[4],
): ReturnType<typeof graphqlCall> {
  return graphqlCall(url, token, READINESS, { c: app.brandClientId }, options);
}
const RECORDS =
  "query($c: ID!, $from: Date!, $to: Date!) { marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, pagination: {page: 1, pageSize: 1000}) { recordId spend } }";

interface DemoApp {
  appClientId: string;
  appClientSecret: string;
  brandClientId: string;
}

/** Waits until `check` holds, polling; resolves with the milliseconds it took. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function errorCode(body: string): string | undefined {
  const parsed = JSON.parse(body) as { errors?: { extensions?: { code?: string } }[] };
  return parsed.errors?.[0]?.extensions?.code;
}

/** The number of records in a marketingRecords answer; fails on a GraphQL error. */
function recordsIn(body: string): number {
  const parsed = JSON.parse(body) as { data?: { marketingRecords?: unknown[] }; errors?: unknown };
  assert.equal(parsed.errors, undefined, body);
  return parsed.data?.marketingRecords?.length ?? 0;
}

describe("three mdq serve instances on one PostgreSQL and one Redis, behind nginx", () => {
  let work: string;
  let database: TestDatabase;
  let postgresGate: TcpGate;
  let redisGate: TcpGate;
  let nginx: Nginx;
  let instances: ServeProcess[] = [];
  let env: NodeJS.ProcessEnv;
  let apps: DemoApp[];
  let from: string;
  let to: string;

  /** A fresh token for `app` from `authUrl` (default: the first instance), from 127.0.0.1. */
  async function token(app: DemoApp, authUrl = instances[0]!.url): Promise<string> {
    const answer = await tokenCall(authUrl, app.appClientId, app.appClientSecret);
    assert.equal(answer.status, 200, answer.body);
    return (JSON.parse(answer.body) as { access_token: string }).access_token;
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "mdq-scale-out-"));
    database = await createTestDatabase("scaleout");
    postgresGate = await startTcpGate(POSTGRES_HOST, POSTGRES_PORT);
    redisGate = await startTcpGate("127.0.0.1", 6379);
    const proxyPort = await freePort();
    const publicUrl = `http://127.0.0.1:${proxyPort}`;
    // A region of its own keeps this run's Redis keys apart from any other run's.
    const region = `t${
      randomBytes(8)
        .toString("hex")
        .replace(/[^a-f]/g, "")
        .slice(0, 6) || "abc"
    }`;
    env = {
      MDQ_REGION: region,
      MDQ_DATABASE_URL: database.urlVia(postgresGate.address),
      MDQ_REDIS_URL: `redis://${redisGate.address}`,
      MDQ_AUTH_URL: publicUrl,
      MDQ_BASE_URL: publicUrl,
      MDQ_RATE_LIMIT_MAX: String(RATE_LIMIT),
      MDQ_TRUSTED_PROXIES: "127.0.0.1",
      // Long enough that only the change feed can explain a revocation seen within seconds.
      MDQ_AUTH_CACHE_SECONDS: "60",
      MDQ_DATABASE_STATEMENT_TIMEOUT_MS: "2000",
    };
    const migrated = await runMdq(["migrate", "--json"], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const credentials = join(work, "credentials.json");
    const seeded = await runMdq(
      [
        "demo",
        "--seed-only",
        "--region",
        region,
        "--days",
        "30",
        "--data",
        join(work, "seed"),
        "--credentials",
        credentials,
      ],
      env,
    );
    assert.equal(seeded.code, 0, seeded.stderr);
    apps = (JSON.parse(await readFile(credentials, "utf8")) as { apps: DemoApp[] }).apps;
    instances = await Promise.all([1, 2, 3].map((n) => startServe(join(work, `instance-${n}`), env)));
    nginx = await startNginx(
      join(work, "nginx"),
      proxyPort,
      instances.map((instance) => instance.port),
    );
    to = daysAgo(1);
    from = daysAgo(10);
  });

  after(async () => {
    await nginx?.stop();
    await Promise.all(instances.map((instance) => instance.stop("SIGKILL")));
    await postgresGate?.close();
    await redisGate?.close();
    await database?.drop();
    await rm(work, { recursive: true, force: true });
  });

  it("mdq migrate is idempotent: a second run applies nothing", async () => {
    const again = await runMdq(["migrate", "--json"], env);
    assert.equal(again.code, 0, again.stderr);
    const result = JSON.parse(again.stdout) as { applied: string[]; current: number };
    assert.deepEqual(result.applied, []);
    assert.ok(result.current >= 1);
  });

  it("a token issued by one instance is accepted by every instance", async () => {
    const app = apps[0]!;
    const issued = await token(app, instances[0]!.url);
    for (const instance of instances) {
      const answer = await readinessOf(instance.url, issued, app);
      assert.equal(answer.status, 200, `${instance.url}: ${answer.body}`);
      assert.ok(JSON.parse(answer.body).data.marketingDataReadiness.status);
    }
  });

  it("the rate limit is one budget across the three instances, not one each", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    const statuses: number[] = [];
    for (let n = 0; n < RATE_LIMIT + 30; n++) {
      const instance = instances[n % instances.length]!;
      const answer = await readinessOf(instance.url, issued, app, { from: "127.0.0.10" });
      statuses.push(answer.status);
    }
    assert.equal(statuses.filter((status) => status === 200).length, RATE_LIMIT);
    assert.equal(statuses.filter((status) => status === 429).length, 30);
    assert.ok(
      statuses.slice(RATE_LIMIT).every((status) => status === 429),
      "every request past the budget is refused",
    );
  });

  it("behind nginx the limit follows the real client address; a spoofed X-Forwarded-For changes nothing", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    const ask = (from: string, headers: Record<string, string> = {}, url = nginx.url) =>
      readinessOf(url, issued, app, { from, headers });
    for (let n = 0; n < RATE_LIMIT; n++) assert.equal((await ask("127.0.0.20")).status, 200);
    const refused = await ask("127.0.0.20");
    assert.equal(refused.status, 429, refused.body);
    assert.ok(Number(refused.headers["retry-after"]) > 0);
    // Another client behind the same proxy still has its whole budget.
    assert.equal((await ask("127.0.0.21")).status, 200);
    // Through nginx, a client claiming another address is still itself: nginx appends the real
    // peer, and the service walks X-Forwarded-For from the right, trusting only the proxy.
    assert.equal((await ask("127.0.0.20", { "x-forwarded-for": "203.0.113.9" })).status, 429);
    // Straight to an instance, an untrusted peer's X-Forwarded-For is ignored altogether: it
    // cannot borrow a fresh budget, nor spend another client's.
    const direct = instances[1]!.url;
    assert.equal((await ask("127.0.0.20", { "x-forwarded-for": "198.51.100.7" }, direct)).status, 429);
    assert.equal((await ask("127.0.0.22", { "x-forwarded-for": "127.0.0.20" }, direct)).status, 200);
  });

  it("a revocation made through one instance reaches the others within seconds (well under 60 s)", async () => {
    const app = apps[1]!;
    const issued = await token(app);
    for (const instance of instances.slice(1)) {
      assert.equal((await readinessOf(instance.url, issued, app)).status, 200);
    }
    const revoked = await runMdq([
      "app",
      "revoke",
      app.appClientId,
      "--data",
      instances[0]!.dataDir,
      "--json",
    ]);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const instance of instances.slice(1)) {
      const took = await eventually(
        `revocation on ${instance.url}`,
        async () => (await readinessOf(instance.url, issued, app)).status === 401,
        60_000,
      );
      assert.ok(took < 10_000, `the change feed carried it in ${took} ms`);
      const refused = await tokenCall(instance.url, app.appClientId, app.appClientSecret);
      assert.equal(refused.status, 400, refused.body);
      assert.equal((JSON.parse(refused.body) as { error: string }).error, "invalid_client");
    }
  });

  it("a key rotation through one instance: tokens signed with the new key verify on every instance", async () => {
    const rotated = await runMdq(["keys", "rotate", "--data", instances[0]!.dataDir, "--json"]);
    assert.equal(rotated.code, 0, rotated.stderr);
    const { kid } = (JSON.parse(rotated.stdout) as { key: { kid: string } }).key;
    const app = apps[0]!;
    const issued = await token(app, instances[0]!.url);
    const header = JSON.parse(Buffer.from(issued.split(".")[0]!, "base64url").toString()) as { kid: string };
    assert.equal(header.kid, kid, "the first instance signs with the new key");
    for (const instance of instances) {
      const answer = await readinessOf(instance.url, issued, app);
      assert.equal(answer.status, 200, `${instance.url}: ${answer.body}`);
      const jwks = JSON.parse((await httpCall(`${instance.url}/.well-known/jwks.json`)).body) as {
        keys: { kid: string }[];
      };
      assert.ok(
        jwks.keys.some((key) => key.kid === kid),
        `${instance.url} publishes the new key`,
      );
    }
  });

  it("PostgreSQL unreachable: 503 with Retry-After and a code, readiness fails, then recovery without restart", async () => {
    const app = apps[2]!;
    const issued = await token(app);
    const instance = instances[2]!;
    postgresGate.block();
    try {
      const answer = await graphqlCall(instance.url, issued, RECORDS, { c: app.brandClientId, from, to });
      assert.equal(answer.status, 503, answer.body);
      assert.equal(errorCode(answer.body), "SERVICE_UNAVAILABLE");
      assert.ok(Number(answer.headers["retry-after"]) > 0);
      assert.doesNotMatch(answer.body, /postgres:|root@|at .*\.js/);
      assert.equal((await httpCall(`${instance.url}/readyz`)).status, 503);
      assert.equal((await httpCall(`${instance.url}/livez`)).status, 200);
    } finally {
      postgresGate.open();
    }
    await eventually(
      "recovery after PostgreSQL came back",
      async () =>
        (await graphqlCall(instance.url, issued, RECORDS, { c: app.brandClientId, from, to })).status === 200,
      15_000,
    );
    assert.equal((await httpCall(`${instance.url}/readyz`)).status, 200);
    assert.equal(instance.process.exitCode, null, "the instance never crashed");
  });

  it("PostgreSQL slow: a statement past the timeout answers 503 SERVICE_UNAVAILABLE, and the next one works", async () => {
    const app = apps[2]!;
    const issued = await token(app);
    const instance = instances[1]!;
    const blocker = await connectTo(database.name);
    try {
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE records IN ACCESS EXCLUSIVE MODE");
      const started = Date.now();
      const answer = await graphqlCall(instance.url, issued, RECORDS, { c: app.brandClientId, from, to });
      assert.equal(answer.status, 503, answer.body);
      assert.equal(errorCode(answer.body), "SERVICE_UNAVAILABLE");
      assert.ok(Number(answer.headers["retry-after"]) > 0);
      assert.ok(Date.now() - started < 10_000, "the statement timeout cut it short");
    } finally {
      await blocker.query("ROLLBACK");
      await blocker.end();
    }
    const answer = await graphqlCall(instance.url, issued, RECORDS, { c: app.brandClientId, from, to });
    assert.equal(answer.status, 200, answer.body);
    assert.ok(recordsIn(answer.body) > 0, answer.body);
  });

  it("Redis unreachable: requests are still answered on the local budget, a warning metric rises, and Redis is used again once back", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    const instance = instances[0]!;
    const metrics = async () => (await httpCall(`http://127.0.0.1:${instance.adminPort}/metrics`)).body;
    redisGate.block();
    try {
      for (let n = 0; n < 5; n++) {
        const answer = await readinessOf(instance.url, issued, app, { from: "127.0.0.50" });
        assert.equal(answer.status, 200, answer.body);
        assert.ok(answer.headers["ratelimit"], "the limit is still applied and announced");
      }
      assert.match(await metrics(), /^mdq_redis_up 0$/m);
      assert.match(await metrics(), /^mdq_redis_errors_total [1-9]/m);
    } finally {
      redisGate.open();
    }
    await eventually("Redis used again", async () => /^mdq_redis_up 1$/m.test(await metrics()), 30_000);
  });

  it("behind nginx hashing Authorization (docs/deployment.md), one token's requests all land on one instance", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    /** Records pages each instance has answered so far, from its metrics. */
    const recordsAnswered = () =>
      Promise.all(
        instances.map(async (instance) => {
          const { body } = await httpCall(`http://127.0.0.1:${instance.adminPort}/metrics`);
          const count = /^mdq_question_duration_seconds_count\{[^}]*class="records"[^}]*\} (\d+)$/m.exec(
            body,
          );
          return Number(count?.[1] ?? 0);
        }),
      );
    const affine = await startNginx(
      join(work, "nginx-token"),
      await freePort(),
      instances.map((instance) => instance.port),
      { balance: "token" },
    );
    try {
      const before = await recordsAnswered();
      for (let request = 0; request < 12; request += 1) {
        const answer = await graphqlCall(affine.url, issued, RECORDS, { c: app.brandClientId, from, to });
        assert.equal(answer.status, 200, answer.body);
        assert.ok(!answer.body.includes('"errors"'), answer.body);
      }
      const served = (await recordsAnswered()).map((count, index) => count - before[index]!);
      assert.deepEqual(
        served.filter((count) => count > 0),
        [12],
        `records pages answered per instance: ${served.join(", ")}`,
      );
    } finally {
      await affine.stop();
    }
  });

  it("an instance killed under load: the others keep serving and every request through nginx is answered", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    const victim = instances[2]!;
    const answers: number[] = [];
    let next = 0;
    const clients = Array.from({ length: 8 }, async (_, client) => {
      while (next < 80) {
        next++;
        const answer = await graphqlCall(
          nginx.url,
          issued,
          RECORDS,
          { c: app.brandClientId, from, to },
          {
            from: `127.0.0.${60 + client}`,
          },
        );
        answers.push(answer.status === 200 && !answer.body.includes('"errors"') ? 200 : answer.status);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    victim.process.kill("SIGKILL");
    await Promise.all(clients);
    assert.ok(answers.length >= 80);
    assert.deepEqual(
      answers.filter((status) => status !== 200),
      [],
      "nginx retried what the dead instance dropped",
    );
    for (const instance of instances.slice(0, 2)) {
      assert.equal((await readinessOf(instance.url, issued, app)).status, 200);
    }
  });

  it("SIGTERM drains: an in-flight request finishes with 200, new ones are refused, the process exits 0", async () => {
    const app = apps[0]!;
    const issued = await token(app);
    const instance = instances[0]!;
    const blocker = await connectTo(database.name);
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE records IN ACCESS EXCLUSIVE MODE");
    const inFlight = graphqlCall(instance.url, issued, RECORDS, { c: app.brandClientId, from, to });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exited = instance.stop("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const late = await readinessOf(instance.url, issued, app).then(
      (answer) => answer.status,
      () => "refused",
    );
    assert.ok(late === 503 || late === "refused", `a request after SIGTERM: ${late}`);
    await blocker.query("ROLLBACK");
    await blocker.end();
    const answer = await inFlight;
    assert.equal(answer.status, 200, answer.body);
    assert.ok(recordsIn(answer.body) > 0, answer.body);
    assert.equal(await exited, 0);
  });
});
