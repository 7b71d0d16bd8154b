/**
 * `MDQ_DATABASE_REPLICA_URLS` (docs/configuration.md): comma-separated standby URLs, only beside
 * `MDQ_DATABASE_URL`; empty keeps every read on the primary; a bad entry is named by its
 * variable, never echoed (it may hold a password).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfig } from "../src/config.js";

const PRIMARY = "postgres://mdq@primary/mdq";

describe("MDQ_DATABASE_REPLICA_URLS", () => {
  it("is empty when unset or blank: today's single database", () => {
    assert.deepEqual(loadConfig({ MDQ_DATABASE_URL: PRIMARY }).databaseReplicaUrls, []);
    assert.deepEqual(
      loadConfig({ MDQ_DATABASE_URL: PRIMARY, MDQ_DATABASE_REPLICA_URLS: " , " }).databaseReplicaUrls,
      [],
    );
  });

  it("lists the standbys in order, trimmed", () => {
    const config = loadConfig({
      MDQ_DATABASE_URL: PRIMARY,
      MDQ_DATABASE_REPLICA_URLS: "postgres://mdq@standby-1/mdq, postgresql://mdq@standby-2/mdq",
    });
    assert.deepEqual(config.databaseReplicaUrls, [
      "postgres://mdq@standby-1/mdq",
      "postgresql://mdq@standby-2/mdq",
    ]);
    assert.ok(Object.isFrozen(config.databaseReplicaUrls));
  });

  it("refuses standbys without a primary, and a URL of another kind, without echoing it", () => {
    assert.throws(() => loadConfig({ MDQ_DATABASE_REPLICA_URLS: "postgres://mdq@standby-1/mdq" }), {
      name: "ConfigError",
      message:
        "invalid configuration MDQ_DATABASE_REPLICA_URLS: standbys need a primary: set MDQ_DATABASE_URL too",
    });
    assert.throws(
      () =>
        loadConfig({ MDQ_DATABASE_URL: PRIMARY, MDQ_DATABASE_REPLICA_URLS: "mysql://u:secret@standby/mdq" }),
      {
        name: "ConfigError",
        message: "invalid configuration MDQ_DATABASE_REPLICA_URLS: use postgres: or postgresql://",
      },
    );
  });
});
