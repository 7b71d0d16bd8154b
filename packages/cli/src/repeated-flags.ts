/**
 * A flag given twice with different values is a usage error (exit 2) for every `mdq` command:
 * commander would silently keep the last value, and `mdq load --replace sources --replace days`
 * would then wipe rows the operator meant to keep. The same value twice is harmless and allowed;
 * flags that collect repeats on purpose (`--map`, parsed by `mapping`) and variadic flags are
 * left alone.
 */
import type { Command } from "commander";
import { mapping } from "./operator-options.js";
import { UsageError } from "./usage-error.js";

/** Parsers of flags meant to be repeated: each repeat adds to the value. */
const COLLECTING_PARSERS: ReadonlySet<unknown> = new Set([mapping]);

/**
 * Makes `command` and every subcommand refuse a flag repeated with another value.
 * @example refuseConflictingRepeats(program); await program.parseAsync(process.argv);
 */
export function refuseConflictingRepeats(command: Command): Command {
  const seen = new Map<string, string | undefined>();
  for (const option of command.options) {
    const collects = option.variadic || COLLECTING_PARSERS.has(option.parseArg);
    if (collects) continue;
    const name = option.name();
    command.on(`option:${name}`, (value: string | undefined) => {
      if (seen.has(name) && seen.get(name) !== value) {
        throw new UsageError(
          `${option.long ?? option.flags} is given twice with different values (${JSON.stringify(seen.get(name))} and ${JSON.stringify(value)}); give it once`,
        );
      }
      seen.set(name, value);
    });
  }
  for (const subcommand of command.commands) refuseConflictingRepeats(subcommand);
  return command;
}
