#!/usr/bin/env node
// What a team would build by default: the same SDL on graphql-yoga (graphql-js execution, no JIT)
// served by node:http, with plain resolvers over the same DuckDB store. It shares everything else
// with MDQ — the resolver functions, bearer-token checks, app cache and store — so the difference
// measured is the GraphQL engine's per-field execution and the HTTP stack around it.
//   node bench/contenders/yoga.mjs --data DIR --port N   (MDQ_AUTH_URL/MDQ_BASE_URL as for mdq serve)
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { createSchema, createYoga } from "graphql-yoga";
import { authenticateBearer } from "../../packages/server/dist/src/graphql/bearer-auth.js";
import { recordsAsObjects, resolvers } from "../../packages/server/dist/src/graphql/resolvers.js";
import { KeyRing, loadConfig, openDuckDbStore, typeDefs } from "../../packages/server/dist/src/index.js";
import { TOKEN_LIFETIME_SECONDS } from "../../packages/server/dist/src/oauth/access-token.js";
import { AppDirectory } from "../../packages/server/dist/src/oauth/app-directory.js";

const { values } = parseArgs({ options: { data: { type: "string" }, port: { type: "string" } } });
if (!values.data || !values.port) throw new Error("usage: yoga.mjs --data DIR --port N");

const config = loadConfig(process.env, { dataDir: values.data, port: values.port });
const store = await openDuckDbStore(values.data);
const keys = await KeyRing.open(values.data, TOKEN_LIFETIME_SECONDS);
const apps = new AppDirectory(store, config.authCacheSeconds);
const auth = {
  keys,
  apps,
  settings: { authUrl: config.authUrl, baseUrl: config.baseUrl, region: config.region },
};

/** Puts the resolvers' page info in `extensions.pageInfo`, as MDQ does. */
const usePageInfo = () => ({
  onExecute: () => ({
    onExecuteDone({ args, result, setResult }) {
      const pageInfo = args.contextValue.pageInfo;
      if (Object.keys(pageInfo).length > 0) setResult({ ...result, extensions: { pageInfo } });
    },
  }),
});

const yoga = createYoga({
  // Records as row objects executed field by field, as a default build does: MDQ's text path
  // writes its rows into MDQ's own response, which graphql-yoga does not have.
  schema: createSchema({
    typeDefs,
    resolvers: { ...resolvers, Query: { ...resolvers.Query, marketingRecords: recordsAsObjects } },
  }),
  graphqlEndpoint: "/graphql",
  graphiql: false,
  logging: false,
  landingPage: false,
  plugins: [usePageInfo()],
  context: async ({ request }) => ({
    caller: await authenticateBearer(
      { headers: { authorization: request.headers.get("authorization") ?? undefined } },
      auth,
    ),
    store,
    timeZone: config.timeZone,
    pageInfo: {},
  }),
});

const server = createServer(yoga);
server.listen(Number(values.port), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  store.close().then(() => process.exit(0));
});
