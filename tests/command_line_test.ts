// The command-line reading shared by `deno task audit`, `witness` and `relay`: both option forms,
// help, and every refusal with its reason.
import assert from "node:assert/strict";
import { portNumber, readArguments, seconds, UsageError } from "../lib/command_line.ts";

/** The (flag, value) pairs `args` gives, taking `--on` without a value and `--name` with one. */
function read(args: string[]): [string, string | null][] | "help" {
  const seen: [string, string | null][] = [];
  const help = readArguments(args, (flag, value, arg) => {
    if (flag === "--on") seen.push([flag, null]);
    else if (flag === "--name") seen.push([flag, value()]);
    else if (!arg.startsWith("-")) seen.push(["", arg]);
    else return false;
    return true;
  });
  return help ?? seen;
}

Deno.test("options read as --flag value and --flag=value, in order, with positionals", () => {
  assert.deepEqual(read(["--name", "a", "--name=b=c", "file", "--on"]), [
    ["--name", "a"],
    ["--name", "b=c"],
    ["", "file"],
    ["--on", null],
  ]);
  assert.deepEqual(read([]), []);
});

Deno.test("--help and -h answer help wherever they stand, before later refusals", () => {
  assert.equal(read(["--name", "a", "--help", "--bogus"]), "help");
  assert.equal(read(["-h"]), "help");
});

Deno.test("a missing or empty value, an unknown option and a stray argument are refused", () => {
  const refused = (args: string[], message: string) =>
    assert.throws(() =>
      readArguments(args, (flag, value) => {
        if (flag === "--name") value();
        return flag === "--name";
      }), (error: unknown) => error instanceof UsageError && error.message === message);
  refused(["--name"], "--name needs a value");
  refused(["--name="], "--name needs a value");
  refused(["--name", ""], "--name needs a value");
  refused(["--verbose"], 'unknown option "--verbose"');
  refused(["-v"], 'unknown option "-v"');
  refused(["extra"], 'unexpected argument "extra"');
});

Deno.test("ports are decimal 0 to 65535; seconds are above 0 and at most the bound", () => {
  assert.equal(portNumber("--port", "0"), 0);
  assert.equal(portNumber("--port", "65535"), 65535);
  for (const bad of ["65536", "-1", "0x10", "1e3", "08", " 80", "", "http"]) {
    assert.throws(() => portNumber("--port", bad), UsageError, bad);
  }
  assert.equal(seconds("--deadline", "2.5", 3600), 2500);
  assert.equal(seconds("--deadline", "3600", 3600), 3_600_000);
  for (const bad of ["0", "-1", "3601", "abc", "", " ", "NaN", "Infinity"]) {
    assert.throws(() => seconds("--deadline", bad, 3600), UsageError, bad);
  }
});
