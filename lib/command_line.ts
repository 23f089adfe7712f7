/**
 * The command lines of the project's programs (`deno task audit`, `witness`, `relay`) read one
 * way: `--flag value` or `--flag=value`, `--help` or `-h`, and a refusal with its reason (exit
 * status 2) for anything else.
 * @module
 */

/** A command line that cannot be run: exit status 2. */
export class UsageError extends Error {}

/**
 * What one argument is to a program: `flag` is the option's name (`--key`), `value()` reads its
 * value (the text after `=`, else the next argument; refused when missing or empty). A handler
 * answers false for an argument it does not know, which is then refused as unknown.
 */
export type ArgumentHandler = (flag: string, value: () => string, arg: string) => boolean;

/**
 * Walks `args`, giving each to `handle`. Answers "help" at the first `--help` or `-h`, and
 * nothing otherwise; throws {@link UsageError} for an option without a value, or an argument
 * `handle` does not take.
 */
export function readArguments(
  args: readonly string[],
  handle: ArgumentHandler,
): "help" | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const split = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const [flag, inline] = split > 0
      ? [arg.slice(0, split), arg.slice(split + 1)]
      : [arg, undefined];
    if (flag === "--help" || flag === "-h") return "help";
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (handle(flag, value, arg)) continue;
    throw new UsageError(
      arg.startsWith("-") ? `unknown option "${arg}"` : `unexpected argument "${arg}"`,
    );
  }
}

/** `value` of option `flag` as a TCP port: a decimal 0 to 65535 (0 picks a free one). */
export function portNumber(flag: string, value: string): number {
  if (!/^(?:0|[1-9][0-9]{0,4})$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`${flag} must be a port number, 0 to 65535; got "${value}"`);
  }
  return Number(value);
}

/** `value` of option `flag` as a number of seconds above 0 and at most `most`, in milliseconds. */
export function seconds(flag: string, value: string, most: number): number {
  const n = Number(value);
  if (!(value.trim() !== "" && n > 0 && n <= most)) {
    throw new UsageError(
      `${flag} must be a number of seconds above 0, at most ${most}; got "${value}"`,
    );
  }
  return Math.round(n * 1000);
}
