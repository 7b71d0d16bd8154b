import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestRegion, type TestRegion } from "@mdq/test-support";

describe("the daily flow over HTTP", () => {
  let region: TestRegion;
  before(async () => {
    region = await startTestRegion();
  });
  after(() => region.close());

  it("issues a token, reports readiness, and serves records and aggregates", async () => {
    const app = region.credentials.apps[0]!;
    const readiness = await region.graphql(
      "query($c: ID!) { marketingDataReadiness(clientId: $c) { status date availableThrough lastProcessedAt } }",
      { c: app.brandClientId },
    );
    assert.equal(readiness.status, 200);
    const ready = readiness.body.data?.["marketingDataReadiness"] as Record<string, unknown>;
    assert.equal(ready["status"], "READY");
    assert.equal(ready["date"], region.today);
  });
});
