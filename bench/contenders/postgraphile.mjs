#!/usr/bin/env node
// PostGraphile v5 (Amber preset, Grafserv on node:http) over the same PostgreSQL database as MDQ
// on PostgreSQL. A records page is asked through `benchRecordsPage`, the connection PostGraphile
// builds for the SQL function the harness adds (same filter and order as MDQ's default sort), so
// it reads the same rows of the same table with the same index. Needs Node ≥ 22.
//   BENCH_DATABASE_URL=postgres://… node24 bench/contenders/postgraphile.mjs --port N
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { postgraphile } from "postgraphile";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const connectionString = process.env.BENCH_DATABASE_URL;
if (!values.port || !connectionString)
  throw new Error("usage: BENCH_DATABASE_URL=… postgraphile.mjs --port N");

const preset = {
  extends: [PostGraphileAmberPreset],
  // The same pool size as MDQ's default (MDQ_DATABASE_POOL_SIZE=10).
  pgServices: [makePgService({ connectionString, schemas: ["public"], poolConfig: { max: 10 } })],
  grafserv: { graphqlPath: "/graphql", graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const server = createServer();
await pgl.createServ(grafserv).addTo(server);
server.listen(Number(values.port), "127.0.0.1");
process.on("SIGTERM", async () => {
  server.close();
  await pgl.release();
  process.exit(0);
});
