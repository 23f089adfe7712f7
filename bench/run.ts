// `deno task bench`: every benchmark in turn, as docs/performance.md lists them; or one named
// bench with its own arguments, `deno task bench hall -- --phones 1000` (a `--` is dropped).
const BENCHES: Record<string, string[]> = {
  micro: ["bench", "-A", "bench/"],
  memory: ["run", "-A", "--v8-flags=--expose-gc", "bench/member_memory.ts"],
  "browser-sign": ["run", "-A", "bench/browser_sign.ts"],
  anonymity: ["run", "-A", "bench/anonymity.ts"],
  load: ["run", "-A", "bench/load.ts"],
  scale: ["run", "-A", "bench/scale.ts"],
  "browser-audit": ["run", "-A", "bench/browser_audit.ts"],
  /** A hall of phones through the relay (bench/hall/main.ts); not part of the whole run. */
  hall: ["run", "-A", "bench/hall/main.ts"],
  /** The verifier's pace at a hall's rings (bench/hall/verify_rate.ts): what VERIFY_RATE stands for. */
  "verify-rate": ["run", "-A", "bench/hall/verify_rate.ts"],
};
const EVERY = ["micro", "memory", "browser-sign", "anonymity", "load", "scale", "browser-audit"];

async function run(name: string, extra: string[]): Promise<number> {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [...BENCHES[name], ...extra],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  return code;
}

const [name, ...rest] = Deno.args;
if (name === undefined) {
  for (const each of EVERY) {
    const code = await run(each, []);
    if (code !== 0) Deno.exit(code);
  }
} else if (Object.hasOwn(BENCHES, name)) {
  Deno.exit(await run(name, rest[0] === "--" ? rest.slice(1) : rest));
} else {
  console.error(`No bench "${name}". Benches: ${Object.keys(BENCHES).join(", ")}.`);
  Deno.exit(2);
}
