/**
 * Where the client's settings come from: the environment (CONTRACT §5). Credentials are read
 * from the environment or given to the constructor, never from the command line.
 */
import { MdqClientError } from "./errors.js";

/** Environment variables the client reads its configuration and credentials from (never argv). */
export const CLIENT_ENV = {
  appClientId: "MDQ_APP_CLIENT_ID",
  appClientSecret: "MDQ_APP_CLIENT_SECRET",
  authUrl: "MDQ_AUTH_URL",
  baseUrl: "MDQ_BASE_URL",
  brandClientId: "MDQ_BRAND_CLIENT_ID",
} as const;

/** The five settings every client needs. */
export interface ClientCredentialsConfig {
  appClientId: string;
  appClientSecret: string;
  /** The region's auth address; the token endpoint is `{authUrl}/oauth2/token`. */
  authUrl: string;
  /** The region's API address; queries go to `{baseUrl}/graphql`. */
  baseUrl: string;
  /** The brand client ID, passed as `clientId` to every query. */
  brandClientId: string;
}

/** The service's default address when `MDQ_AUTH_URL`/`MDQ_BASE_URL` are unset (CONTRACT §1). */
export const DEFAULT_SERVICE_URL = "http://localhost:4000";

/**
 * Reads the client's settings from `env`. `MDQ_APP_CLIENT_ID`, `MDQ_APP_CLIENT_SECRET` and
 * `MDQ_BRAND_CLIENT_ID` are required; the URLs default to `http://localhost:4000`. Throws
 * INVALID_CONFIG naming the variable that is missing or wrong (never its value).
 * @example const client = new MdqClient(clientConfigFromEnv(process.env));
 */
export function clientConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ClientCredentialsConfig {
  const required = (key: keyof typeof CLIENT_ENV): string => {
    const name = CLIENT_ENV[key];
    const value = env[name];
    if (value === undefined || value === "") {
      throw new MdqClientError("INVALID_CONFIG", `${name} is not set`);
    }
    return value;
  };
  const url = (key: "authUrl" | "baseUrl"): string => {
    const value = env[CLIENT_ENV[key]];
    return value === undefined || value === "" ? DEFAULT_SERVICE_URL : value;
  };
  return validateClientConfig({
    appClientId: required("appClientId"),
    appClientSecret: required("appClientSecret"),
    authUrl: url("authUrl"),
    baseUrl: url("baseUrl"),
    brandClientId: required("brandClientId"),
  });
}

/**
 * Checks a configuration once, and returns it with the URLs normalised (no trailing slash).
 * Whitespace in the credentials is refused here rather than by the token endpoint (spec §4.1:
 * "no stray whitespace or newlines"), because it is almost always a copy-paste accident.
 */
export function validateClientConfig(config: ClientCredentialsConfig): ClientCredentialsConfig {
  for (const key of ["appClientId", "appClientSecret", "brandClientId"] as const) {
    const value = config[key];
    if (typeof value !== "string" || value === "") {
      throw new MdqClientError("INVALID_CONFIG", `${key} (${CLIENT_ENV[key]}) is required`);
    }
    if (/\s/.test(value)) {
      throw new MdqClientError("INVALID_CONFIG", `${key} (${CLIENT_ENV[key]}) contains whitespace`);
    }
  }
  return {
    ...config,
    authUrl: httpUrl(config.authUrl, "authUrl"),
    baseUrl: httpUrl(config.baseUrl, "baseUrl"),
  };
}

function httpUrl(value: string, key: "authUrl" | "baseUrl"): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MdqClientError("INVALID_CONFIG", `${key} (${CLIENT_ENV[key]}) is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new MdqClientError("INVALID_CONFIG", `${key} (${CLIENT_ENV[key]}) must be an http(s) URL`);
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new MdqClientError(
      "INVALID_CONFIG",
      `${key} (${CLIENT_ENV[key]}) must not carry credentials, a query or a fragment`,
    );
  }
  return url.href.replace(/\/+$/, "");
}
