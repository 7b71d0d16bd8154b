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
import type { Page } from "playwright-core";
import { startChromium, type TestBrowser } from "./support/chromium.js";
import { startTestRegion, type TestRegion } from "./support/test-region.js";

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
    await browser?.close();
    await region?.close();
  });

  /** Opens a page recording console errors, uncaught exceptions and failed requests. */
  async function openExplorer(): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.browser.contexts()[0]!.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()} (${message.location().url})`);
    });
    page.on("pageerror", (error) => problems.push(`exception: ${error.message}`));
    page.on("requestfailed", (request) => problems.push(`failed: ${request.url()}`));
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    const response = await page.goto(`${address}/graphql`);
    assert.equal(response?.status(), 200);
    return { page, problems };
  }

  /** The text of GraphiQL's response pane, from its CodeMirror editor. */
  function resultText(page: Page): Promise<string> {
    return page.evaluate<string>(
      `document.querySelector(".result-window .CodeMirror").CodeMirror.getValue()`,
    );
  }

  it("renders the IDE with the daily flow's tabs, then answers a readiness query typed with a demo token: READY", async () => {
    const { page, problems } = await openExplorer();
    await page.locator(".graphiql-container").waitFor({ state: "visible", timeout: 20_000 });
    await page.locator(".graphiql-query-editor .CodeMirror").waitFor({ state: "visible" });
    assert.deepEqual(
      (await page.locator(".graphiql-tab").allInnerTexts()).map((title) => title.trim()),
      ["Readiness", "Records", "Totals"],
    );
    assert.match(await page.title(), /^MDQ explorer · region uk$/);

    await page.fill("#mdq-token", await region.token());
    await page.click("#mdq-token-form button[type=submit]");
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
  });
});
