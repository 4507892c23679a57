import { parseArgs } from "node:util";

/**
 * The options of a script's command line: `--help` prints `usage` and exits 0; an unknown or
 * malformed option prints the error and `usage` and exits 2. `options` is parseArgs' option table
 * (a `help` flag is added).
 */
export function readOptions(usage, options) {
  let values;
  try {
    ({ values } = parseArgs({ options: { ...options, help: { type: "boolean", short: "h", default: false } } }));
  } catch (error) {
    console.error(`${error.message}\n\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}
