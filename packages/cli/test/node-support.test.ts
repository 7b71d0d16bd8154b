/**
 * The Node.js support policy (docs/deployment.md "Node.js versions", issue 57): `npm ci` must be
 * free of EBADENGINE warnings on Node 20.9 (the oldest the root `engines` admits) and on Node 24,
 * so every package the lock installs must admit both; the policy is written down.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";

const ROOT = new URL("../../../../", import.meta.url);
const json = (path: string) => JSON.parse(readFileSync(new URL(path, ROOT), "utf8"));

/** `major.minor.patch` of a version text, `x` and missing parts as 0. */
function parts(text: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = text
    .split(".")
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Whether `version` satisfies an `engines.node` range of the forms npm packages use: `||`
 * alternatives of space-separated `>=V`, `^V`, and bare majors (`20`, `10.x`).
 */
function satisfies(version: string, range: string): boolean {
  const have = parts(version);
  return range.split("||").some((alternative) =>
    alternative
      .trim()
      .replace(/(>=|\^)\s+/g, "$1")
      .split(/\s+/)
      .every((comparator) => {
        if (comparator === "*" || comparator === "") return true;
        if (comparator.startsWith(">=")) return compare(have, parts(comparator.slice(2))) >= 0;
        if (comparator.startsWith("^")) {
          const want = parts(comparator.slice(1));
          return have[0] === want[0] && compare(have, want) >= 0;
        }
        assert.match(comparator, /^\d+(\.x)?$/, `a comparator this check reads: ${range}`);
        return have[0] === parts(comparator)[0];
      }),
  );
}

describe("Node.js support", () => {
  it("declares Node 20.9 as the oldest it runs on", () => {
    assert.equal(json("package.json").engines.node, ">=20.9");
  });

  for (const node of ["20.9.0", "24.0.0"]) {
    it(`installs only packages whose engines admit Node ${node} (npm ci prints no EBADENGINE)`, () => {
      const refused: string[] = [];
      for (const [path, entry] of Object.entries(json("package-lock.json").packages) as [
        string,
        { version?: string; engines?: { node?: string } | string[]; os?: string[] },
      ][]) {
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        if (range === undefined || (entry.os && !entry.os.includes("linux"))) continue;
        if (!satisfies(node, range)) refused.push(`${path}@${entry.version} wants node ${range}`);
      }
      assert.deepEqual(refused, []);
    });
  }

  it("runs what the held-back packages do: inject's cookies (cookie@1), a download's header (content-disposition@2)", async () => {
    // Resolved from the server package, whose dependencies (Fastify, Mercurius) pull them in.
    const fromServer = createRequire(new URL("packages/server/package.json", ROOT));
    const fastify = fromServer("fastify") as (options?: object) => {
      get(
        path: string,
        handler: (request: unknown, reply: { header(n: string, v: string[]): void }) => string,
      ): void;
      inject(options: object): Promise<{ statusCode: number; cookies: unknown[] }>;
    };
    const app = fastify();
    app.get("/", (_request, reply) => {
      reply.header("set-cookie", ["a=1; Path=/; HttpOnly", "b=2; Max-Age=10"]);
      return "ok";
    });
    const answer = await app.inject({ method: "GET", url: "/", cookies: { sent: "yes" } });
    assert.deepEqual(JSON.parse(JSON.stringify(answer.cookies)), [
      { name: "a", value: "1", path: "/", httpOnly: true },
      { name: "b", value: "2", maxAge: 10 },
    ]);
    const fromStatic = createRequire(fromServer.resolve("@fastify/static"));
    const { create } = fromStatic("content-disposition") as { create(name: string): string };
    assert.equal(
      create("résumé.csv"),
      "attachment; filename=\"r?sum?.csv\"; filename*=UTF-8''r%C3%A9sum%C3%A9.csv",
    );
  });

  it("holds back the two Node ≥ 22 packages with overrides, and writes the policy down", () => {
    assert.deepEqual(json("package.json").overrides, {
      "light-my-request": { cookie: "^1.1.1" },
      "@fastify/static": { "content-disposition": "^2.0.1" },
    });
    const deployment = readFileSync(new URL("docs/deployment.md", ROOT), "utf8");
    assert.match(deployment, /\n## Node\.js versions\n/);
    assert.match(deployment, /\*\*Node 20 reached its end of life\s+on 2026-04-30\*\*/);
  });
});
