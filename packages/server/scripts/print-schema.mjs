#!/usr/bin/env node
// Writes packages/server/schema.graphql: the SDL of the service's GraphQL schema, printed from the
// compiled typeDefs (run `npm run build` first). test/schema.test.ts fails when the committed file
// and the running service's introspected schema differ.
//   node packages/server/scripts/print-schema.mjs
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSchema, printSchema } from "graphql";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const { typeDefs } = await import(
  pathToFileURL(join(packageRoot, "dist", "src", "graphql", "schema.js")).href
);
const target = join(packageRoot, "schema.graphql");
writeFileSync(target, `${printSchema(buildSchema(typeDefs))}\n`);
console.log(`wrote ${target}`);
