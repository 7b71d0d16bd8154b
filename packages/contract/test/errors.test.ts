import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  ADMIN_ERROR_CODES,
  CLIENT_ERROR_CODES,
  type ErrorEntry,
  GRAPHQL_ERROR_CODES,
  isErrorCode,
  OAUTH_ERROR_CODES,
} from "../src/index.js";

/** The `##` heading of docs/errors.md under which each catalogue is documented. */
const CATALOGUES: Record<string, Readonly<Record<string, ErrorEntry>>> = {
  "Token endpoint": OAUTH_ERROR_CODES,
  "GraphQL endpoint": GRAPHQL_ERROR_CODES,
  "Admin API": ADMIN_ERROR_CODES,
  "Client SDK": CLIENT_ERROR_CODES,
};

/** One `### \`code\` (statuses)` section of docs/errors.md. */
interface DocumentedCode {
  section: string;
  statuses: number[];
  body: string;
}

/**
 * The `###` code sections of docs/errors.md, keyed by `##` heading then code. Lines inside
 * fenced code blocks are skipped: shell comments there start with `#` too.
 */
function documentedCodes(markdown: string): Map<string, Map<string, DocumentedCode>> {
  const sections = new Map<string, Map<string, DocumentedCode>>();
  let fenced = false;
  let section = "";
  let current: DocumentedCode | undefined;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    if (!fenced && line.startsWith("## ")) {
      section = line.slice(3).trim();
      current = undefined;
      continue;
    }
    const heading = fenced ? null : /^### `([^`]+)` \(([^)]*)\)\s*$/.exec(line);
    if (heading) {
      const [, code, statuses] = heading as unknown as [string, string, string];
      current = { section, statuses: (statuses.match(/\d{3}/g) ?? []).map(Number), body: "" };
      if (!sections.has(section)) sections.set(section, new Map());
      assert.ok(!sections.get(section)!.has(code), `${code} is documented twice under "${section}"`);
      sections.get(section)!.set(code, current);
      continue;
    }
    if (!fenced && line.startsWith("### ")) current = undefined;
    else if (current) current.body += `${line}\n`;
  }
  return sections;
}

/** Codes of a section's summary table: body rows (below the `| ---` line) whose first cell is a code. */
function summaryTableCodes(markdown: string, section: string): Set<string> {
  const start = markdown.indexOf(`\n## ${section}\n`);
  const end = markdown.indexOf("\n## ", start + 1);
  const text = markdown.slice(start, end === -1 ? undefined : end);
  const table = text.slice(text.indexOf("### Summary"), text.indexOf("\n### `"));
  const summary = table.slice(table.search(/^\| -/m));
  return new Set([...summary.matchAll(/^\| `([^`]+)` +\|/gm)].map((match) => match[1]!));
}

const docs = readFileSync(new URL("../../../../docs/errors.md", import.meta.url), "utf8");
const documented = documentedCodes(docs);

describe("the error catalogue against docs/errors.md", () => {
  for (const [section, catalogue] of Object.entries(CATALOGUES)) {
    describe(section, () => {
      const sectionCodes = documented.get(section) ?? new Map<string, DocumentedCode>();

      it("documents every code of the catalogue, and no other", () => {
        assert.deepEqual([...sectionCodes.keys()].sort(), Object.keys(catalogue).sort());
      });

      it("documents each code with the catalogue's status first", () => {
        for (const [code, entry] of Object.entries(catalogue)) {
          const statuses = sectionCodes.get(code)?.statuses;
          // Client-side codes have no HTTP answer: their heading names no status.
          assert.deepEqual(statuses?.[0], entry.status === 0 ? undefined : entry.status, code);
        }
      });

      it("says that a hidden message's cause is only logged", () => {
        for (const [code, entry] of Object.entries(catalogue)) {
          if (!entry.exposeMessage) assert.match(sectionCodes.get(code)?.body ?? "", /logged/, code);
        }
      });
    });
  }

  it("documents codes only under the catalogues' headings", () => {
    assert.deepEqual([...documented.keys()].sort(), Object.keys(CATALOGUES).sort());
  });

  it("lists the same codes in the summary tables as in the sections", () => {
    for (const section of ["Token endpoint", "GraphQL endpoint"]) {
      assert.deepEqual(
        [...summaryTableCodes(docs, section)].sort(),
        Object.keys(CATALOGUES[section]!).sort(),
        section,
      );
    }
  });
});

describe("the catalogue itself", () => {
  it("gives every entry an HTTP status (or 0 for client-side codes) and a shown flag", () => {
    for (const catalogue of Object.values(CATALOGUES)) {
      for (const [code, entry] of Object.entries(catalogue)) {
        assert.ok(entry.status === 0 || (entry.status >= 200 && entry.status <= 599), code);
        assert.equal(typeof entry.exposeMessage, "boolean", code);
      }
    }
  });

  it("answers query-level GraphQL errors with 200, as GraphQL over HTTP wants", () => {
    for (const code of ["BAD_USER_INPUT", "QUERY_TOO_COMPLEX", "METRIC_NOT_REQUESTED"] as const) {
      assert.equal(GRAPHQL_ERROR_CODES[code].status, 200);
    }
  });

  it("hides the message of unexpected failures only", () => {
    const hidden = Object.values(CATALOGUES).flatMap((catalogue) =>
      Object.entries(catalogue).flatMap(([code, entry]) => (entry.exposeMessage ? [] : [code])),
    );
    assert.deepEqual(hidden.sort(), ["INTERNAL", "INTERNAL_SERVER_ERROR", "server_error"]);
  });

  it("recognises GraphQL codes and nothing else", () => {
    assert.equal(isErrorCode("FORBIDDEN"), true);
    assert.equal(isErrorCode("forbidden"), false);
    assert.equal(isErrorCode("invalid_client"), false);
    assert.equal(isErrorCode("toString"), false);
    assert.equal(isErrorCode(403), false);
  });
});
