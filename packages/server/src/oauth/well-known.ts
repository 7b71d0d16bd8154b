/** Public key set (RFC 7517) and authorization server metadata (RFC 8414) of the region. */
import type { FastifyInstance } from "fastify";
import { READ_SCOPE } from "./access-token.js";
import type { KeyRing } from "./signing-keys.js";
import { CLIENT_CREDENTIALS_GRANT } from "./token-endpoint.js";

export interface WellKnownOptions {
  keys: KeyRing;
  authUrl: string;
}

/** Registers `/.well-known/jwks.json` and `/.well-known/oauth-authorization-server`. */
export async function wellKnown(app: FastifyInstance, options: WellKnownOptions): Promise<void> {
  app.get("/.well-known/jwks.json", async (_request, reply) => {
    reply.header("cache-control", "public, max-age=300");
    return options.keys.jwks();
  });
  const metadata = {
    issuer: options.authUrl,
    token_endpoint: `${options.authUrl}/oauth2/token`,
    jwks_uri: `${options.authUrl}/.well-known/jwks.json`,
    grant_types_supported: [CLIENT_CREDENTIALS_GRANT],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
    scopes_supported: [READ_SCOPE],
    // No authorization endpoint: client credentials only, so no response types.
    response_types_supported: [],
  };
  app.get("/.well-known/oauth-authorization-server", async (_request, reply) => {
    reply.header("cache-control", "public, max-age=3600");
    return metadata;
  });
}
