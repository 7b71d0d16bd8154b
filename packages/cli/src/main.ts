#!/usr/bin/env node
import { ConfigError } from "@mdq/server";
/**
 * `mdq`, the operator CLI: starts the service (`serve`), a seeded demo (`demo`), and manages a
 * region. Exit codes: 0 success, 1 failure at run time, 2 bad usage or configuration.
 */
import { Command, CommanderError } from "commander";
import { demoCommand } from "./commands/demo.js";
import { serveCommand } from "./commands/serve.js";
import { UsageError } from "./usage-error.js";

const program = new Command("mdq")
  .description("Operate an MDQ region: run the service, seed a demo, manage brands, apps and data.")
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text) });
for (const command of [serveCommand(), demoCommand()]) {
  // Settings are not inherited through addCommand: each subcommand throws instead of exiting.
  program.addCommand(command.exitOverride().configureOutput({ outputError: (text, write) => write(text) }));
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else if (error instanceof ConfigError || error instanceof UsageError) {
    process.stderr.write(`mdq: ${error.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`mdq: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
