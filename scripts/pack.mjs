#!/usr/bin/env node
// `npm run tarballs`: the installable tarballs, one set per audience, each package with the
// workspaces it depends on (read from the dependency graph, so a new workspace such as
// @mdq/contract comes along as soon as a package depends on it):
//   operator  @mdq/cli (`mdq`: the service and its CLI) and its workspace dependencies
//   client    mdq-client (the brands' SDK and CLI) and its workspace dependencies
// The workspaces are private (never published to a registry): an operator or a brand installs
// them from these files with `npm install ./a.tgz ./b.tgz`, the other dependencies from the
// registry. See docs/deployment.md.
//
//   node scripts/pack.mjs [--out DIR] [--json] [--no-build]
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
/** The package each audience installs; its workspace dependencies are packed with it. */
const AUDIENCES = { operator: "@mdq/cli", client: "mdq-client" };

const { values: flags } = parseArgs({
  options: {
    out: { type: "string", default: join(ROOT, "tarballs") },
    json: { type: "boolean", default: false },
    "no-build": { type: "boolean", default: false },
  },
});

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

/** Every workspace's manifest, by package name. */
function workspaces() {
  const byName = new Map();
  for (const directory of readJson(join(ROOT, "package.json")).workspaces) {
    const manifest = readJson(join(ROOT, directory, "package.json"));
    byName.set(manifest.name, manifest);
  }
  return byName;
}

/** `name` and the workspaces it depends on at run time (dependencies, not devDependencies), dependencies first. */
function withWorkspaceDependencies(name, manifests, found = []) {
  const manifest = manifests.get(name);
  if (manifest === undefined) throw new Error(`pack: no workspace is named ${name}`);
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    if (manifests.has(dependency) && !found.includes(dependency))
      withWorkspaceDependencies(dependency, manifests, found);
  }
  if (!found.includes(name)) found.push(name);
  return found;
}

function run(command, args) {
  const result = spawnSync(command, args, {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? "");
    throw new Error(`pack: ${command} ${args.join(" ")} failed (${result.status ?? result.signal})`);
  }
  return result.stdout;
}

const manifests = workspaces();
const audiences = Object.entries(AUDIENCES).map(([audience, name]) => [
  audience,
  withWorkspaceDependencies(name, manifests),
]);
const names = [...new Set(audiences.flatMap(([, packages]) => packages))];
const out = resolve(flags.out);
mkdirSync(out, { recursive: true });
if (!flags["no-build"]) run("npm", ["run", "build", "--silent"]);
const packed = JSON.parse(
  run("npm", [
    "pack",
    "--json",
    "--pack-destination",
    out,
    ...names.flatMap((name) => ["--workspace", name]),
  ]),
);
const tarballs = new Map(
  packed.map((entry) => [
    entry.name,
    { name: entry.name, tarball: join(out, entry.filename), files: entry.files.map((file) => file.path) },
  ]),
);
const result = Object.fromEntries(
  audiences.map(([audience, packages]) => [audience, packages.map((name) => tarballs.get(name))]),
);

if (flags.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  for (const [audience, packages] of Object.entries(result)) {
    const files = packages.map((entry) => entry.tarball).join(" ");
    process.stdout.write(`${audience}: npm install ${files}\n`);
  }
}
