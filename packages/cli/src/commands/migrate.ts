/**
 * `mdq migrate`: apply the PostgreSQL store's versioned migrations (docs/storage.md). The
 * connection string is read from MDQ_DATABASE_URL only, never from a flag: a password in argv
 * would be visible to every user of the machine.
 */
import { describeUnreadableDays, loadConfig, migrateDatabase, openPostgresStore } from "@mdq/server";
import { Command } from "commander";
import { UsageError } from "../usage-error.js";

export function migrateCommand(): Command {
  return new Command("migrate")
    .description("Apply the PostgreSQL schema migrations named by MDQ_DATABASE_URL (safe to run again).")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExample:\n  MDQ_DATABASE_URL=postgres://mdq@db.internal:5432/mdq_uk mdq migrate\n" +
        "\nThe embedded DuckDB store needs no migration: its schema is applied when it opens.\n",
    )
    .action(async (flags: { json?: boolean }) => {
      const config = loadConfig(process.env);
      if (config.databaseUrl === null)
        throw new UsageError("set MDQ_DATABASE_URL to the PostgreSQL database to migrate");
      const result = await migrateDatabase(config.databaseUrl);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else if (result.applied.length === 0) {
        process.stdout.write(`schema is current (version ${result.current})\n`);
      } else {
        process.stdout.write(
          `applied ${result.applied.join(", ")}; schema is at version ${result.current}\n`,
        );
      }
      await warnUnreadableDays(config.databaseUrl);
    });
}

/**
 * Rows an older release loaded without an FX rate on or before their day (issue 57): said on
 * stderr once the schema is current, so that the operator loads the rates before brands read.
 */
async function warnUnreadableDays(url: string): Promise<void> {
  const store = await openPostgresStore({ url, poolSize: 1 });
  try {
    const found = await store.unreadableDays();
    if (found.length === 0) return;
    process.stderr.write(
      `mdq migrate: warning: stored records have no FX rate on or before their day, so every read over those days fails for their brand (UNSUPPORTED_CURRENCY):\n${found
        .map((days) => `  ${describeUnreadableDays(days)}\n`)
        .join("")}Load the missing rates with \`mdq fx load\`; \`mdq status\` lists these days.\n`,
    );
  } finally {
    await store.close();
  }
}
