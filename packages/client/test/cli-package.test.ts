/**
 * The `mdq-client` binary ships in a package that installs alone: it declares the binary, and
 * neither its dependencies nor the CLI's imports reach the service's code (the contract's
 * vocabulary, `@mdq/contract`, has no runtime dependencies).
 */
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { posix, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = new URL("../../package.json", import.meta.url);
const CLI_SOURCES = fileURLToPath(new URL("../../src/cli/", import.meta.url));
const SDK_SOURCES = fileURLToPath(new URL("../../src/", import.meta.url));

/** The .ts files below `dir` (its folders' too), as paths relative to it. */
async function sourcesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((name) => name.endsWith(".ts")).map((name) => name.split(sep).join("/"));
}

/** Each import of `files` (relative to `dir`): the file and the module it names. */
async function importsOf(dir: string, files: string[]): Promise<[file: string, specifier: string][]> {
  const imports: [string, string][] = [];
  for (const file of files) {
    const source = await readFile(`${dir}${file}`, "utf8");
    for (const [, specifier] of source.matchAll(/^import [^;]*? from "([^"]+)";$/gms))
      imports.push([file, specifier!]);
  }
  return imports;
}

describe("the mdq-client package", () => {
  it("declares the mdq-client binary, with a node shebang, and depends on no server package", async () => {
    const manifest = JSON.parse(await readFile(PACKAGE, "utf8"));
    assert.deepEqual(manifest.bin, { "mdq-client": "./bin/mdq-client.js" });
    const main = await readFile(new URL(`../../${manifest.bin["mdq-client"]}`, import.meta.url), "utf8");
    assert.ok(main.startsWith("#!/usr/bin/env node\n"));
    const dependencies = Object.keys(manifest.dependencies ?? {});
    assert.deepEqual(dependencies.sort(), [
      "@mdq/contract",
      "commander",
      "hyparquet",
      "hyparquet-writer",
      "undici",
      "valibot",
    ]);
  });

  it("has CLI modules that import only Node built-ins, commander, hyparquet (export checks a Parquet footer), hyparquet-writer, the contract and the SDK", async () => {
    const files = await sourcesBelow(CLI_SOURCES);
    assert.ok(files.includes("main.ts") && files.includes("sync.ts"));
    for (const [file, specifier] of await importsOf(CLI_SOURCES, files)) {
      assert.ok(
        specifier.startsWith("node:") ||
          specifier === "commander" ||
          specifier === "hyparquet" ||
          specifier === "hyparquet-writer" ||
          specifier === "@mdq/contract" ||
          /^\.\.?\/[\w-]+\.js$/.test(specifier),
        `${file} imports ${specifier}`,
      );
    }
  });

  it("has SDK modules that never import the CLI's (the SDK stands alone)", async () => {
    const files = (await sourcesBelow(SDK_SOURCES)).filter((file) => !file.startsWith("cli/"));
    assert.ok(files.includes("mirror.ts") && files.includes("client.ts"));
    for (const [file, specifier] of await importsOf(SDK_SOURCES, files)) {
      const target = posix.join(posix.dirname(file), specifier);
      assert.ok(!target.startsWith("cli/"), `${file} imports ${specifier}`);
    }
  });
});
