/**
 * The GraphiQL explorer in a real browser (issue 13): Debian's headless Chromium opens
 * `GET /graphql` of a seeded region, the IDE renders from MDQ's own assets with no console error
 * (a Content-Security-Policy violation is one), and a readiness query typed with a demo token
 * answers READY. The screenshot is kept in `test-artifacts/` (gitignored).
 */
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { startChromium, startTestRegion, type TestBrowser, type TestRegion } from "@mdq/test-support";
import type { Page } from "playwright-core";

/** `<repo>/test-artifacts/`, from `packages/server/dist/test/`. */
const ARTIFACTS = fileURLToPath(new URL("../../../../test-artifacts/", import.meta.url));

describe("GraphiQL explorer in Chromium", () => {
  let region: TestRegion;
  let browser: TestBrowser;
  let address: string;

  before(async () => {
    region = await startTestRegion({ days: 5, explorer: "on" });
    address = await region.service.app.listen({ host: "127.0.0.1", port: 0 });
    browser = await startChromium();
  });
  after(async () => {
    // The region closes even when the browser's cleanup fails: a listening server left open keeps
    // this file's process, and the whole suite, from ending.
    try {
      await browser?.close();
    } finally {
      await region?.close();
    }
  });

  interface Explorer {
    page: Page;
    /** Console errors, uncaught exceptions, failed requests and answers ≥ 400, in order. */
    problems: string[];
    /** The `Authorization` header of each `POST /graphql` the page sent, in order. */
    queries: (string | undefined)[];
  }

  /** Opens the explorer in a fresh browser context (no tabs kept from another test), recording. */
  async function openExplorer(): Promise<Explorer> {
    const context = await browser.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    const queries: (string | undefined)[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on("pageerror", (error) => problems.push(`exception: ${error.message}`));
    page.on("requestfailed", (request) => problems.push(`failed: ${request.url()}`));
    page.on("request", (request) => {
      if (request.method() === "POST") queries.push(request.headers()["authorization"]);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    const response = await page.goto(`${address}/graphql`);
    assert.equal(response?.status(), 200);
    await page.locator(".graphiql-container").waitFor({ state: "visible", timeout: 20_000 });
    await page.locator(".graphiql-query-editor .CodeMirror").waitFor({ state: "visible" });
    return { page, problems, queries };
  }

  /** Pastes a token into the page's field and submits it, as a user would. */
  async function useToken(page: Page, token: string): Promise<void> {
    await page.fill("#mdq-token", token);
    await page.click("#mdq-token-form button[type=submit]");
  }

  /** The text of GraphiQL's response pane, from its CodeMirror editor. */
  function resultText(page: Page): Promise<string> {
    return page.evaluate<string>(
      `document.querySelector(".result-window .CodeMirror").CodeMirror.getValue()`,
    );
  }

  it("renders the IDE with the daily flow's tabs, then answers a readiness query typed with a demo token: READY", async () => {
    const { page, problems, queries } = await openExplorer();
    assert.deepEqual(
      (await page.locator(".graphiql-tab").allInnerTexts()).map((title) => title.trim()),
      ["Readiness", "Records", "Totals"],
    );
    assert.match(await page.title(), /^MDQ explorer · region uk$/);

    assert.deepEqual(queries, [], "no request without a token: the page answers itself");
    const token = await region.token();
    await useToken(page, token);
    const brand = region.credentials.apps[0]!.brandClientId;
    await page.locator(".graphiql-query-editor .CodeMirror").click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type(`query Today { marketingDataReadiness(clientId: "${brand}") { status date } }`);
    // The tab takes the operation's name once GraphiQL has parsed the new text: run only then.
    await page.locator(".graphiql-tab", { hasText: "Today" }).waitFor();
    await page.locator(".graphiql-execute-button").click();
    await mkdir(ARTIFACTS, { recursive: true });
    try {
      await page
        .locator(".result-window .CodeMirror-code", { hasText: "READY" })
        .waitFor({ timeout: 20_000 });
    } finally {
      await page.screenshot({ path: `${ARTIFACTS}graphql-explorer.png`, fullPage: true });
    }
    const result = JSON.parse(await resultText(page)) as {
      data: { marketingDataReadiness: { status: string; date: string } };
    };
    assert.deepEqual(result, { data: { marketingDataReadiness: { status: "READY", date: region.today } } });
    assert.deepEqual(problems, []);
    assert.ok(queries.length >= 2, "the schema's introspection, then the query");
    for (const authorization of queries) assert.equal(authorization, `Bearer ${token}`);
    await page.context().close();
  });

  it("sends the Authorization header of GraphiQL's Headers tab rather than the token field", async () => {
    const { page, problems, queries } = await openExplorer();
    await useToken(page, await region.token());
    await page.locator(".graphiql-editor-tools button", { hasText: "Headers" }).click();
    await page.locator(".graphiql-editor-tool .CodeMirror").last().click();
    await page.keyboard.type(`{"Authorization": "Bearer not-a-jwt"`);
    await page.locator(".graphiql-execute-button").click();
    await page.locator(".result-window .CodeMirror-code", { hasText: "UNAUTHENTICATED" }).waitFor();
    const result = JSON.parse(await resultText(page)) as { errors: { extensions: { code: string } }[] };
    assert.deepEqual(
      result.errors.map((error) => error.extensions.code),
      ["UNAUTHENTICATED"],
    );
    assert.equal(queries.at(-1), "Bearer not-a-jwt");
    assert.ok(problems.length > 0 && problems.every((problem) => /401/.test(problem)), problems.join("\n"));
    await page.context().close();
  });
});
