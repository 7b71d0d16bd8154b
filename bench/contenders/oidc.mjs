#!/usr/bin/env node
// node-oidc-provider as the peer of MDQ's token endpoint: one confidential client allowed the
// client_credentials grant, authenticated with HTTP Basic, issued a JWT access token (RFC 9068) for
// one resource server with the same scope, lifetime and signing algorithm (EdDSA, Ed25519) as MDQ.
//   BENCH_CLIENT_SECRET=… node bench/contenders/oidc.mjs --port N --client-id ID --audience URL
// (the secret comes from the environment: argv is visible to every user of the machine)
import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import Provider from "oidc-provider";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    "client-id": { type: "string" },
    audience: { type: "string", default: "http://localhost:4000" },
  },
});
const clientSecret = process.env.BENCH_CLIENT_SECRET;
if (!values.port || !values["client-id"] || !clientSecret) {
  throw new Error("usage: BENCH_CLIENT_SECRET=… oidc.mjs --port N --client-id ID [--audience URL]");
}

const SCOPE = "api_data/read";
const signingKey = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
const issuer = `http://127.0.0.1:${values.port}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: values["client-id"],
      client_secret: clientSecret,
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
      scope: SCOPE,
      id_token_signed_response_alg: "EdDSA",
    },
  ],
  jwks: { keys: [{ ...signingKey, kid: "bench-ed25519", alg: "EdDSA", use: "sig" }] },
  scopes: [SCOPE],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => values.audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: SCOPE,
        audience: values.audience,
        accessTokenTTL: 3600,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "EdDSA" } },
      }),
    },
  },
});

const server = createServer(provider.callback());
server.listen(Number(values.port), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  process.exit(0);
});
