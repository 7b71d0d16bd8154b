#!/usr/bin/env node
/**
 * `mdq-client`: a brand's command line for MDQ. `sync` downloads a date range into a file (the
 * daily job, docs/daily-sync.md); `readiness`, `access`, `records` and `aggregate` print one answer.
 * Credentials come from the environment only (MDQ_APP_CLIENT_ID, MDQ_APP_CLIENT_SECRET, ...).
 * Exit codes: exit-codes.ts.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { MdqClientError } from "../errors.js";
import { EXIT_CODES_HELP, exitCodeOf } from "./exit-codes.js";
import { exportCommand } from "./export-command.js";
import { handleInterruptions, interruption } from "./interrupt.js";
import { mirrorCommand } from "./mirror-command.js";
import { exitWhenStdoutCloses } from "./output.js";
import { accessCommand, aggregateCommand, readinessCommand, recordsCommand } from "./query-commands.js";
import { syncCommand } from "./sync-command.js";

/** Settings are not inherited through addCommand: every command throws instead of exiting. */
function throwInsteadOfExiting(command: Command): Command {
  command.exitOverride().configureOutput({ outputError: (text, write) => write(text) });
  for (const subcommand of command.commands) throwInsteadOfExiting(subcommand);
  return command;
}

/** The one line a failure prints on stderr: the message and, for the service's errors, the code. */
function describe(error: unknown): string {
  if (error instanceof MdqClientError) {
    const status = error.status === undefined ? "" : `${error.status} `;
    return `${error.message} (${status}${error.code})`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The version of this package (`mdq-client --version`), from the package.json shipped beside `dist/`. */
const { version } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const program = new Command("mdq-client")
  .description("Download a brand's marketing data from MDQ: a daily file sync, and one-off queries.")
  .version(version)
  .addHelpText("after", EXIT_CODES_HELP);
for (const command of [
  syncCommand(),
  exportCommand(),
  mirrorCommand(),
  readinessCommand(),
  accessCommand(),
  recordsCommand(),
  aggregateCommand(),
]) {
  program.addCommand(command.addHelpText("after", EXIT_CODES_HELP));
}
throwInsteadOfExiting(program);
handleInterruptions();
exitWhenStdoutCloses();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const code = exitCodeOf(error, interruption.received);
  if (interruption.received !== undefined) {
    process.stderr.write(
      `mdq-client: interrupted by ${interruption.received}; run the same command again to resume a sync\n`,
    );
  } else if (!(error instanceof CommanderError)) {
    process.stderr.write(`mdq-client: ${describe(error)}\n`);
  }
  process.exitCode = code;
}
