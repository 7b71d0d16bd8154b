// The flags of a bench script, read once at its start: `--help` prints its usage and exits 0; an
// unknown flag or a bad value exits 2 with the reason and the usage, never with a stack trace.
import { parseArgs } from "node:util";
import { positive } from "./options.mjs";

/**
 * `options` (node:util parseArgs options, `--help` added) read from argv. Each flag named in
 * `wholeNumbers` must be a whole number > 0 (`positive`), each entry when it is a comma-separated
 * list; `check(values)` throws for anything else a script refuses (`list` of options.mjs).
 * @example const values = benchArgs("bench/sync.mjs", USAGE, { scale: { type: "string", default: "120" } }, ["scale"]);
 */
export function benchArgs(script, usage, options, wholeNumbers = [], check = () => {}) {
  try {
    const { values } = parseArgs({ options: { ...options, help: { type: "boolean", default: false } } });
    if (values.help) {
      process.stdout.write(usage);
      process.exit(0);
    }
    for (const name of wholeNumbers) for (const text of String(values[name]).split(",")) positive(name, text);
    check(values);
    return values;
  } catch (error) {
    process.stderr.write(`${script}: ${error.message}\n\n${usage}`);
    process.exit(2);
  }
}
