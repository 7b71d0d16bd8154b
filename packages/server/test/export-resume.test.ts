/**
 * The bulk export's resume cannot mix answers (CONTRACT §7, issue 57 point 3): every 200 names
 * its whole query in `MDQ-Resume`; a resume (`after=` + `resume=`) whose parameters differ from
 * the response it continues is refused with 409 RESUME_MISMATCH before any row; `after=` without
 * the token is refused (400), even with the right `dataVersion`; an identical resume is served.
 * Both stores, through Fastify's HTTP handling.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changesRegion, engines } from "./changes-harness.js";

for (const engine of engines()) {
  describe(`export resume: ${engine.name}`, () => {
    const region = changesRegion(engine, { days: 7 });

    async function exportOf(parameters: Record<string, string>) {
      const query = new URLSearchParams({ clientId: "brand-acme", ...region.whole(), ...parameters });
      const answer = await region.service.app.inject({
        method: "GET",
        url: `/export/marketing-records?${query}`,
        headers: { authorization: `Bearer ${await region.token()}` },
      });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    }

    /** A GBP export of GB and DE, and a resume point in its middle. */
    async function original() {
      const parameters = { currency: "GBP", markets: "GB,DE", format: "ndjson" };
      const whole = await exportOf(parameters);
      assert.equal(whole.status, 200, whole.body);
      const lines = whole.body.trimEnd().split("\n");
      assert.ok(lines.length > 10, `${lines.length} rows`);
      const cut = Math.floor(lines.length / 2);
      const row = JSON.parse(lines[cut]!) as { date: string; recordId: string };
      const resume = String(whole.headers["mdq-resume"]);
      const dataVersion = String(whole.headers["mdq-data-version"]);
      return { parameters, lines, cut, after: `${row.date},${row.recordId}`, resume, dataVersion };
    }

    function refusal(message: string, code: string) {
      return JSON.stringify({ errors: [{ message, extensions: { code } }] });
    }

    it("names the whole query in MDQ-Resume and serves an identical resume", async () => {
      const first = await original();
      assert.match(first.resume, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      const rest = await exportOf({ ...first.parameters, after: first.after, resume: first.resume });
      assert.equal(rest.status, 200, rest.body);
      assert.equal(rest.headers["mdq-resume"], first.resume);
      assert.equal(rest.headers["mdq-data-version"], first.dataVersion);
      assert.deepEqual(
        [...first.lines.slice(0, first.cut + 1), ...rest.body.trimEnd().split("\n")],
        first.lines,
      );
      // The lists' order and repeats are not the query: DE,GB,GB resumes GB,DE.
      const reordered = await exportOf({
        ...first.parameters,
        markets: "DE,GB,GB",
        after: first.after,
        resume: first.resume,
      });
      assert.equal(reordered.status, 200, reordered.body);
      assert.equal(reordered.body, rest.body);
    });

    it("refuses a resume in another currency: 409 RESUME_MISMATCH, before any row", async () => {
      const first = await original();
      const answer = await exportOf({
        ...first.parameters,
        currency: "EUR",
        after: first.after,
        resume: first.resume,
        dataVersion: first.dataVersion,
      });
      assert.equal(answer.status, 409);
      assert.equal(answer.headers["mdq-row-count"], undefined);
      assert.equal(
        answer.body,
        refusal(
          'this resume asks currency "EUR", but the export it resumes asked "GBP": send the original request\'s parameters with after and resume, or start again without them',
          "RESUME_MISMATCH",
        ),
      );
      // Left out, the currency is EUR (the default): refused the same way.
      const { currency: _, ...withoutCurrency } = first.parameters;
      const defaulted = await exportOf({ ...withoutCurrency, after: first.after, resume: first.resume });
      assert.equal(defaulted.status, 409);
      assert.equal(JSON.parse(defaulted.body).errors[0].extensions.code, "RESUME_MISMATCH");
    });

    it("refuses a resume with other filters, another range or another format", async () => {
      const first = await original();
      const cases: [Record<string, string>, string][] = [
        [{ markets: "GB" }, 'this resume asks markets "GB", but the export it resumes asked "DE,GB"'],
        [
          { channels: "search" },
          'this resume asks channels "search", but the export it resumes asked (not given)',
        ],
        [
          { from: region.last() },
          `this resume asks from "${region.last()}", but the export it resumes asked "${region.first()}"`,
        ],
        [{ format: "csv" }, 'this resume asks format "csv", but the export it resumes asked "ndjson"'],
      ];
      for (const [change, start] of cases) {
        const answer = await exportOf({
          ...first.parameters,
          ...change,
          after: first.after,
          resume: first.resume,
        });
        assert.equal(answer.status, 409, JSON.stringify(change));
        assert.equal(
          answer.body,
          refusal(
            `${start}: send the original request's parameters with after and resume, or start again without them`,
            "RESUME_MISMATCH",
          ),
        );
      }
    });

    it("serves after= with dataVersion and no token, as CONTRACT §7 fixes it (unchecked)", async () => {
      const first = await original();
      const rest = await exportOf({
        ...first.parameters,
        after: first.after,
        dataVersion: first.dataVersion,
      });
      assert.equal(rest.status, 200, rest.body);
      assert.deepEqual(
        [...first.lines.slice(0, first.cut + 1), ...rest.body.trimEnd().split("\n")],
        first.lines,
      );
    });

    it("refuses an edited token: 400 BAD_USER_INPUT", async () => {
      const first = await original();
      const [version, payload, sum] = first.resume.split(".") as [string, string, string];
      const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as unknown[];
      fields[3] = "EUR";
      const edited = `${version}.${Buffer.from(JSON.stringify(fields)).toString("base64url")}.${sum}`;
      const answer = await exportOf({
        ...first.parameters,
        currency: "EUR",
        after: first.after,
        resume: edited,
      });
      assert.equal(answer.status, 400);
      assert.equal(
        answer.body,
        refusal(
          `resume (${JSON.stringify(edited.slice(0, 40))}) is not an MDQ-Resume token: pass the MDQ-Resume header of the response you resume, unchanged`,
          "BAD_USER_INPUT",
        ),
      );
    });
  });
}
