/** `mdq serve`: run the service of one region from the environment and flags. */

import { buildService, loadConfig, openStore } from "@mdq/server";
import { Command } from "commander";
import {
  ADMIN_PORT_HELP,
  checkListenerPorts,
  closingStoreOnFailure,
  runService,
  serviceParts,
} from "../run-service.js";
import { threadPoolProblem } from "../thread-pool.cjs";
import { UsageError } from "../usage-error.js";

export function serveCommand(): Command {
  return new Command("serve")
    .description(
      "Run the token and GraphQL endpoints of one region (configuration: MDQ_* environment, flags win).",
    )
    .option("--region <code>", "region code (MDQ_REGION), e.g. uk")
    .option("--host <address>", "address to listen on (MDQ_HOST)")
    .option("--port <port>", "port to listen on (MDQ_PORT)")
    .option("--admin-port <port>", ADMIN_PORT_HELP)
    .option("--data <dir>", "data directory holding the store and signing keys (MDQ_DATA_DIR)")
    .option("--auth-url <url>", "public base URL of the token endpoint (MDQ_AUTH_URL)")
    .option("--base-url <url>", "public base URL of the GraphQL endpoint (MDQ_BASE_URL)")
    .addHelpText(
      "after",
      "\nExamples:\n  MDQ_REGION=us mdq serve --port 4001 --data /var/lib/mdq/us\n" +
        "  MDQ_DATABASE_URL=postgres://mdq@db:5432/mdq_us MDQ_REDIS_URL=redis://cache:6379 mdq serve --region us\n",
    )
    .action(async (flags: Record<string, string | undefined>) => {
      const config = loadConfig(process.env, {
        region: flags["region"],
        host: flags["host"],
        port: flags["port"],
        adminPort: flags["adminPort"],
        dataDir: flags["data"],
        authUrl: flags["authUrl"],
        baseUrl: flags["baseUrl"],
      });
      const threadPool = threadPoolProblem(config.exportConcurrency, process.env);
      if (threadPool !== null) throw new UsageError(threadPool);
      await checkListenerPorts(config);
      const store = await openStore(config);
      const { service, address } = await closingStoreOnFailure(store, async () => {
        const service = await buildService(config, serviceParts(store));
        return { service, address: await runService(service) };
      });
      service.app.log.info({ address, region: config.region }, "MDQ serving");
    });
}
