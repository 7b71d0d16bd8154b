/** How the public routes read a Content-Type header (plugins/request-body.ts, RFC 9110 §8.3). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeUtf8, mediaTypeOf } from "../src/plugins/request-body.js";

describe("mediaTypeOf", () => {
  it("lower-cases the media type and the charset, and unquotes a quoted charset", () => {
    assert.deepEqual(mediaTypeOf("Application/JSON; Charset=UTF-8"), {
      type: "application/json",
      charset: "utf-8",
    });
    assert.deepEqual(mediaTypeOf('application/json; boundary=x; charset="utf-8"'), {
      type: "application/json",
      charset: "utf-8",
    });
    assert.deepEqual(mediaTypeOf("application/x-www-form-urlencoded"), {
      type: "application/x-www-form-urlencoded",
      charset: undefined,
    });
  });

  it("reads no media type from a missing or malformed header", () => {
    for (const header of [undefined, "", "json", "application/json; charset", "application/json;;"]) {
      assert.equal(mediaTypeOf(header).type, "", String(header));
    }
  });
});

describe("decodeUtf8", () => {
  it("decodes valid UTF-8, refuses invalid bytes, and reads no body as empty", () => {
    assert.equal(decodeUtf8(Buffer.from("grüße", "utf8")), "grüße");
    assert.equal(decodeUtf8(Buffer.from([0xc3, 0x28])), undefined);
    assert.equal(decodeUtf8(undefined), "");
  });
});
