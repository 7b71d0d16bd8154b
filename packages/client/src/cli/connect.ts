/**
 * The client every `mdq-client` command uses: configured from the environment only
 * (CONTRACT §5: credentials never come from argv, where `ps` and shell history would show them).
 */
import { MdqClient } from "../client.js";
import { clientConfigFromEnv } from "../config.js";
import { MdqClientError } from "../errors.js";
import type { MdqClientEvent } from "../types.js";

/** The variables that tune how much of an answer (and of a run) the CLI accepts (docs/daily-sync.md). */
export const LIMIT_ENV = {
  maxBodyBytes: "MDQ_CLIENT_MAX_ANSWER_BYTES",
  maxRequestsPerDay: "MDQ_CLIENT_MAX_REQUESTS_PER_DAY",
} as const;

/** The limits set in `env`, each a positive whole number; INVALID_CONFIG (exit 2) otherwise. */
function limitsFromEnv(env: NodeJS.ProcessEnv): { maxBodyBytes?: number; maxRequestsPerDay?: number } {
  const limits: { maxBodyBytes?: number; maxRequestsPerDay?: number } = {};
  for (const [key, name] of Object.entries(LIMIT_ENV) as [keyof typeof LIMIT_ENV, string][]) {
    const text = env[name];
    if (text === undefined || text === "") continue;
    if (!/^[1-9][0-9]{0,14}$/.test(text)) {
      throw new MdqClientError("INVALID_CONFIG", `${name} must be a positive whole number`);
    }
    limits[key] = Number(text);
  }
  return limits;
}

/** The variable that turns off compressed answers (docs/daily-sync.md): `off`, or `on` (the default). */
export const COMPRESSION_ENV = "MDQ_CLIENT_COMPRESSION";

/** Whether `env` asks for compressed answers; INVALID_CONFIG (exit 2) for a value other than on or off. */
function compressionFromEnv(env: NodeJS.ProcessEnv): boolean {
  const text = env[COMPRESSION_ENV];
  if (text === undefined || text === "" || text === "on") return true;
  if (text === "off") return false;
  throw new MdqClientError("INVALID_CONFIG", `${COMPRESSION_ENV} must be on or off`);
}

/** A client for the app and brand named by `MDQ_*` in `env`; throws INVALID_CONFIG (exit 2) if one is missing. */
export function clientFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  onEvent?: (event: MdqClientEvent) => void,
): MdqClient {
  return new MdqClient({
    ...clientConfigFromEnv(env),
    ...limitsFromEnv(env),
    compression: compressionFromEnv(env),
    userAgent: "mdq-client-cli/0.1",
    ...(onEvent ? { onEvent } : {}),
  });
}
