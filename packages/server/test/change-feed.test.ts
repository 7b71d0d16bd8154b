/**
 * Operator changes reach every instance of a region (CONTRACT §2: a revoked app's tokens stop
 * working within 60 s), tested with two instances over one store in one process:
 * - with Redis, through the change feed, at once: the app cache is kept 60 s here, so only the
 *   feed can explain a change seen within a second, and the periodic key reload is off;
 * - without Redis, a token signed with a key the instance has not seen yet makes it re-read the
 *   ring, and the periodic reload brings the ring (and the JWKS) up to date by itself.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  adminCall,
  daysAgo,
  deleteKeys,
  graphqlOn,
  REDIS_HOST,
  REDIS_PORT,
  REDIS_URL,
  requestToken,
  type SharedRegion,
  startSharedRegion,
  startTcpGate,
  type TcpGate,
  tokenFrom,
  uniqueRegion,
  within,
} from "@mdq/test-support";
import { decodeProtectedHeader } from "jose";
import type { Service } from "../src/server.js";

const READINESS = "query($c: ID!) { marketingDataReadiness(clientId: $c) { status } }";
const RECORDS_IN = `query($c: ID!, $from: Date!, $to: Date!, $m: [String!]) {
  marketingRecords(clientId: $c, dateRange: {from: $from, to: $to}, filter: {markets: $m}) { recordId }
}`;
/** Far below the 60 s app cache: only the change feed can deliver a change this fast. */
const FEED_DEADLINE_MS = 2000;

function demoApp(region: SharedRegion, appClientId: string) {
  const app = region.credentials.apps.find((entry) => entry.appClientId === appClientId);
  if (!app) throw new Error(`no demo app ${appClientId}`);
  return app;
}

async function jwksKids(service: Service): Promise<string[]> {
  const response = await service.app.inject({ method: "GET", url: "/.well-known/jwks.json" });
  return (response.json() as { keys: { kid: string }[] }).keys.map((key) => key.kid);
}

describe("the change feed over Redis: two instances, one store", () => {
  let region: SharedRegion;
  let first: Service;
  let second: Service;

  before(async () => {
    region = await startSharedRegion({
      config: { region: uniqueRegion(), redisUrl: REDIS_URL, authCacheSeconds: 60 },
    });
    first = await region.instance({ keyRefreshSeconds: 0 });
    second = await region.instance({ keyRefreshSeconds: 0 });
    for (const service of [first, second]) {
      await service.redis!.connected();
      await service.changes.ready();
    }
  });
  after(async () => {
    await region.close();
    await deleteKeys(`mdq:${region.config.region}:`);
  });

  it("a revocation through one instance's admin API is refused by the other at once, despite its 60 s cache", async () => {
    const app = demoApp(region, "app-acme-analytics");
    const token = await tokenFrom(first, app);
    // The second instance caches the app as active for 60 s.
    assert.equal((await graphqlOn(second, token, READINESS, { c: app.brandClientId })).statusCode, 200);
    const revoked = await adminCall(region, first, "POST", `/admin/apps/${app.appClientId}/revoke`);
    assert.equal(revoked.statusCode, 200, revoked.body);
    const took = await within(FEED_DEADLINE_MS, "revocation on the second instance", async () => {
      const answer = await graphqlOn(second, token, READINESS, { c: app.brandClientId });
      return answer.statusCode === 401;
    });
    assert.ok(took < FEED_DEADLINE_MS);
    const refused = await requestToken(second, app);
    assert.equal(refused.statusCode, 400);
    assert.equal((refused.json() as { error: string }).error, "invalid_client");
    assert.equal(await second.metrics.value("mdq_changes_received_total", { kind: "app" }), 1);
    assert.equal(await first.metrics.value("mdq_changes_published_total", { kind: "app" }), 1);
  });

  it("a secret rotated without grace through one instance stops working on the other at once", async () => {
    const app = demoApp(region, "app-globex-bi");
    // The second instance caches the app (and its old secret hash) for 60 s.
    assert.equal((await requestToken(second, app)).statusCode, 200);
    const rotated = await adminCall(region, first, "POST", `/admin/apps/${app.appClientId}/rotate-secret`, {
      graceSeconds: 0,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const secret = (rotated.json() as { appClientSecret: string }).appClientSecret;
    await within(FEED_DEADLINE_MS, "the old secret refused on the second instance", async () => {
      return (await requestToken(second, app)).statusCode === 400;
    });
    assert.equal((await requestToken(second, { ...app, appClientSecret: secret })).statusCode, 200);
  });

  it("a grant removed through one instance narrows what the other serves at once", async () => {
    const app = demoApp(region, "app-initech-dashboard");
    const market = app.markets[0]!;
    const token = await tokenFrom(first, app);
    const variables = { c: app.brandClientId, from: daysAgo(3), to: daysAgo(1), m: [market] };
    const allowed = await graphqlOn(second, token, RECORDS_IN, variables);
    assert.equal(allowed.statusCode, 200, allowed.body);
    const removed = await adminCall(region, first, "POST", "/admin/grants/remove", {
      brandId: app.brandClientId,
      markets: [market],
    });
    assert.equal(removed.statusCode, 200, removed.body);
    await within(FEED_DEADLINE_MS, "the removed market refused on the second instance", async () => {
      const answer = await graphqlOn(second, token, RECORDS_IN, variables);
      return answer.statusCode === 403;
    });
  });

  it("a key rotation through one instance is published in the other's JWKS at once", async () => {
    const rotated = await adminCall(region, first, "POST", "/admin/keys/rotate");
    assert.equal(rotated.statusCode, 200, rotated.body);
    const { kid } = (rotated.json() as { key: { kid: string } }).key;
    // The JWKS names no kid of a request, so only the feed (no periodic reload here) can explain it.
    await within(FEED_DEADLINE_MS, "the new key in the second instance's JWKS", async () =>
      (await jwksKids(second)).includes(kid),
    );
    const app = demoApp(region, "app-initech-search");
    const token = await tokenFrom(first, app);
    assert.equal(decodeProtectedHeader(token).kid, kid);
    const answer = await graphqlOn(second, token, READINESS, { c: app.brandClientId });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(await second.metrics.value("mdq_signing_key_reloads_total", { reason: "change" }), 1);
  });
});

describe("the change feed after an instance lost Redis for a while", () => {
  let region: SharedRegion;
  let gate: TcpGate;
  let direct: Service;
  let gated: Service;

  before(async () => {
    gate = await startTcpGate(REDIS_HOST, REDIS_PORT);
    region = await startSharedRegion({
      config: { region: uniqueRegion(), redisUrl: REDIS_URL, authCacheSeconds: 60 },
    });
    direct = await region.instance({ keyRefreshSeconds: 0 });
    gated = await region.instance({ keyRefreshSeconds: 0 }, { redisUrl: `redis://${gate.address}` });
    for (const service of [direct, gated]) {
      await service.redis!.connected();
      await service.changes.ready();
    }
  });
  after(async () => {
    await region.close();
    await gate.close();
    await deleteKeys(`mdq:${region.config.region}:`);
  });

  it("drops what it cached once it hears Redis again, since it may have missed a change", async () => {
    const app = demoApp(region, "app-acme-analytics");
    const token = await tokenFrom(direct, app);
    assert.equal((await graphqlOn(gated, token, READINESS, { c: app.brandClientId })).statusCode, 200);
    gate.block();
    try {
      const revoked = await adminCall(region, direct, "POST", `/admin/apps/${app.appClientId}/revoke`);
      assert.equal(revoked.statusCode, 200, revoked.body);
      // The message went out while the gated instance could not hear it: its cache still says active.
      assert.equal((await graphqlOn(gated, token, READINESS, { c: app.brandClientId })).statusCode, 200);
    } finally {
      gate.open();
    }
    await within(5000, "the revocation applied after the reconnect", async () => {
      return (await graphqlOn(gated, token, READINESS, { c: app.brandClientId })).statusCode === 401;
    });
    assert.equal(await gated.metrics.value("mdq_changes_received_total", { kind: "all" }), 1);
  });
});

describe("key changes without Redis: two instances, one store", () => {
  let region: SharedRegion;
  let first: Service;
  let second: Service;
  /** Reloads its ring every second. */
  let third: Service;

  before(async () => {
    region = await startSharedRegion();
    first = await region.instance({ keyRefreshSeconds: 0 });
    second = await region.instance({ keyRefreshSeconds: 0 });
    third = await region.instance({ keyRefreshSeconds: 1 });
  });
  after(() => region.close());

  it("a token signed with a key the instance has not loaded yet is accepted after one reload of the ring", async () => {
    const rotated = await adminCall(region, first, "POST", "/admin/keys/rotate");
    assert.equal(rotated.statusCode, 200, rotated.body);
    const { kid } = (rotated.json() as { key: { kid: string } }).key;
    const app = region.credentials.apps[0]!;
    const token = await tokenFrom(first, app);
    assert.equal(decodeProtectedHeader(token).kid, kid);
    const answer = await graphqlOn(second, token, READINESS, { c: app.brandClientId });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(await second.metrics.value("mdq_signing_key_reloads_total", { reason: "unknown_kid" }), 1);
  });

  it("tokens naming made-up keys are refused, and reload the ring at most once per 5 s", async () => {
    const app = region.credentials.apps[0]!;
    const [header, payload, signature] = (await tokenFrom(first, app)).split(".") as [string, string, string];
    const before = await first.metrics.value("mdq_signing_key_reloads_total", { reason: "unknown_kid" });
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const forgedHeader = {
        ...(JSON.parse(Buffer.from(header, "base64url").toString()) as object),
        kid: `made-up-${attempt}`,
      };
      const forged = `${Buffer.from(JSON.stringify(forgedHeader)).toString("base64url")}.${payload}.${signature}`;
      const answer = await graphqlOn(first, forged, READINESS, { c: app.brandClientId });
      assert.equal(answer.statusCode, 401, answer.body);
    }
    const reloads =
      (await first.metrics.value("mdq_signing_key_reloads_total", { reason: "unknown_kid" })) - before;
    assert.equal(reloads, 1);
  });

  it("the periodic reload brings a rotation made elsewhere into the JWKS by itself", async () => {
    const rotated = await adminCall(region, first, "POST", "/admin/keys/rotate");
    const { kid } = (rotated.json() as { key: { kid: string } }).key;
    // The JWKS request names no kid, and nothing tells the third instance: only its timer can.
    await within(3000, "the new key in the third instance's JWKS", async () =>
      (await jwksKids(third)).includes(kid),
    );
    assert.ok((await third.metrics.value("mdq_signing_key_reloads_total", { reason: "periodic" })) >= 1);
    assert.ok(
      !(await jwksKids(second)).includes(kid),
      "an instance without the timer still has the old ring",
    );
  });
});
