#!/usr/bin/env node
/**
 * `mdq`, the operator CLI: starts the service (`serve`), a seeded demo (`demo`), migrates a
 * PostgreSQL store (`migrate`), and manages a running region through its admin API (brand, app,
 * grant, fx, load, publish, keys, status).
 *
 * Exit codes (docs/cli.md):
 *   0 success
 *   1 failure: the service failed (500) or something unexpected happened
 *   2 usage error: bad flags or values (dates, market codes, durations), bad configuration
 *   3 refused by the service (400, 404, 409, 422): the input or the region's state was wrong
 *   4 the service (or, for `migrate`, the database) cannot be reached
 *   5 unauthorized (401): the admin token was refused
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { AdminError } from "./admin-client.js";
import { appCommand } from "./commands/app.js";
import { brandCommand } from "./commands/brand.js";
import { fxCommand } from "./commands/fx.js";
import { grantCommand } from "./commands/grant.js";
import { keysCommand } from "./commands/keys.js";
import { loadCommand } from "./commands/load.js";
import { publishCommand } from "./commands/publish.js";
import { statusCommand } from "./commands/status.js";
import { dropOutputWhenStdoutCloses } from "./output.js";
import { refuseConflictingRepeats } from "./repeated-flags.js";
import { UsageError } from "./usage-error.js";

/** Settings are not inherited through addCommand: every command, nested ones too, throws instead of exiting. */
function throwInsteadOfExiting(command: Command): Command {
  command.exitOverride().configureOutput({ outputError: (text, write) => write(text) });
  for (const subcommand of command.commands) throwInsteadOfExiting(subcommand);
  return command;
}

/** `serve`, `demo` and `migrate`, which load the service's code (DuckDB, PostgreSQL, Fastify, GraphQL). */
async function serviceCommands(): Promise<Command[]> {
  const [{ serveCommand }, { demoCommand }, { migrateCommand }] = await Promise.all([
    import("./commands/serve.js"),
    import("./commands/demo.js"),
    import("./commands/migrate.js"),
  ]);
  return [serveCommand(), demoCommand(), migrateCommand()];
}

/** The commands that only talk HTTP to the admin API. */
const operatorCommands = [
  brandCommand(),
  appCommand(),
  grantCommand(),
  fxCommand(),
  loadCommand(),
  publishCommand(),
  keysCommand(),
  statusCommand(),
];
// An operator command starts in ~0.1 s instead of ~0.6 s when the service's code is not loaded.
const operatorOnly = operatorCommands.some((command) => command.name() === process.argv[2]);

/** The version of this package (`mdq --version`), from the package.json shipped beside `dist/`. */
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const program = new Command("mdq")
  .description("Operate an MDQ region: run the service, seed a demo, manage brands, apps and data.")
  .version(version);
for (const command of [...(operatorOnly ? [] : await serviceCommands()), ...operatorCommands]) {
  program.addCommand(command);
}
throwInsteadOfExiting(program);
refuseConflictingRepeats(program);
dropOutputWhenStdoutCloses();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (error instanceof UsageError || (error instanceof Error && error.name === "ConfigError")) {
    process.stderr.write(`mdq: ${error.message}\n`);
    process.exitCode = 2;
  } else if (error instanceof Error && error.name === "StoreUnavailableError") {
    process.stderr.write(`mdq: ${error.message}\n`);
    process.exitCode = 4;
  } else if (error instanceof AdminError) {
    process.stderr.write(`mdq: ${error.message}\n`);
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write(`mdq: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
