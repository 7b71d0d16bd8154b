/**
 * The client every `mdq-client` command uses: configured from the environment only
 * (CONTRACT §5: credentials never come from argv, where `ps` and shell history would show them).
 */
import { MdqClient } from "../client.js";
import { clientConfigFromEnv } from "../config.js";
import type { MdqClientEvent } from "../types.js";

/** A client for the app and brand named by `MDQ_*` in `env`; throws INVALID_CONFIG (exit 2) if one is missing. */
export function clientFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  onEvent?: (event: MdqClientEvent) => void,
): MdqClient {
  return new MdqClient({
    ...clientConfigFromEnv(env),
    userAgent: "mdq-client-cli/0.1",
    ...(onEvent ? { onEvent } : {}),
  });
}
