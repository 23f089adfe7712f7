// WITNESS_POLICY (server/witness_policy.ts, protocol §6): the witness lines of a C2SP tlog-policy
// file with comments, blank lines, tabs and the policy's other line kinds noted and ignored; each
// malformed file refused with the line at fault named; and readConfig stopping the start on it.
import assert from "node:assert/strict";
import {
  COSIGNATURE_V1_TYPE,
  ED25519_TYPE,
  formatVerifierKey,
  signerKey,
} from "../../lib/protocol/note.ts";
import { readConfig } from "../../server/config.ts";
import {
  MAX_POLICY_WITNESSES,
  parseWitnessPolicy,
  PolicyError,
} from "../../server/witness_policy.ts";

/** The cosignature/v1 vkey of a witness named `name` whose seed is 32 bytes of `fill`. */
function vkeyOf(name: string, fill: number, type: 0x01 | 0x04 = COSIGNATURE_V1_TYPE): string {
  return formatVerifierKey(signerKey({ name, seed: new Uint8Array(32).fill(fill) }, type));
}

const A = vkeyOf("witness.example/a", 1);
const B = vkeyOf("witness.example/b", 2);
const LOG = vkeyOf("vote.example.org/log", 3, ED25519_TYPE);

Deno.test("parseWitnessPolicy reads witness lines and notes what it ignores", () => {
  const policy = parseWitnessPolicy(
    [
      "# The witnesses of vote.example.org",
      "",
      `log ${LOG} https://vote.example.org/api`,
      `  witness\tA  ${A}   https://a.example/witness/  `,
      "   # an indented comment",
      `witness B ${B} http://127.0.0.1:8001`,
      `witness C ${vkeyOf("witness.example/c", 4)}`,
      "group AB any A B",
      "quorum AB",
      "",
    ].join("\n"),
  );
  assert.deepEqual(
    policy.witnesses.map(({ name, vkey, url }) => ({ name, vkey, url })),
    [
      { name: "A", vkey: A, url: "https://a.example/witness" },
      { name: "B", vkey: B, url: "http://127.0.0.1:8001" },
    ],
  );
  assert.equal(policy.witnesses[0].key.name, "witness.example/a");
  assert.equal(policy.witnesses[0].key.type, COSIGNATURE_V1_TYPE);
  assert.deepEqual(policy.notes, [
    'line 3: a "log" line is not used by the server, ignored',
    'line 7: witness "C" has no URL and is not pushed to',
    'line 8: a "group" line is not used by the server, ignored',
    'line 9: a "quorum" line is not used by the server, ignored',
  ]);
  assert.deepEqual(parseWitnessPolicy(""), { witnesses: [], notes: [] });
  assert.deepEqual(parseWitnessPolicy("# nothing\n\n \t\n"), { witnesses: [], notes: [] });
});

Deno.test("parseWitnessPolicy refuses a malformed file, naming the line", async (t) => {
  const url = "https://w.example";
  const many = Array.from(
    { length: MAX_POLICY_WITNESSES + 1 },
    (_, i) => `witness w${i} ${vkeyOf(`w.example/${i}`, 10 + i)} ${url}`,
  ).join("\n");
  const cases: { desc: string; text: string; line: number; message: RegExp }[] = [
    { desc: "an unknown line kind", text: `# x\nwitnes A ${A} ${url}`, line: 2, message: /kind/ },
    { desc: "a witness without a vkey", text: "witness A", line: 1, message: /witness <name>/ },
    { desc: "not a vkey", text: `witness A ${A.slice(0, -4)} ${url}`, line: 1, message: /vkey/ },
    {
      desc: "a log's Ed25519 vkey",
      text: `\n\nwitness A ${LOG} ${url}`,
      line: 3,
      message: /type 0x04.*0x01/,
    },
    {
      desc: "a name used twice",
      text: `witness A ${A} ${url}\nwitness A ${B} ${url}`,
      line: 2,
      message: /"A" is used twice/,
    },
    {
      desc: "one key under two names",
      text: `witness A ${A} ${url}\nwitness B ${vkeyOf("other/name", 1)} ${url}`,
      line: 2,
      message: /key of an earlier witness/,
    },
    { desc: "the name none", text: `witness none ${A} ${url}`, line: 1, message: /reserved/ },
    { desc: "an ftp URL", text: `witness A ${A} ftp://w.example`, line: 1, message: /http/ },
    { desc: "a relative URL", text: `witness A ${A} /witness`, line: 1, message: /absolute/ },
    {
      desc: "a URL with a query",
      text: `witness A ${A} https://w.example/?k=1`,
      line: 1,
      message: /query/,
    },
    {
      desc: "something after the URL",
      text: `witness A ${A} ${url} extra`,
      line: 1,
      message: /"extra"/,
    },
    {
      desc: "a carriage return",
      text: `witness A ${A} ${url}\r\n`,
      line: 1,
      message: /control/,
    },
    {
      desc: "a vkey too long",
      text: `witness A ${"a".repeat(501)} ${url}`,
      line: 1,
      message: /500/,
    },
    {
      desc: `over ${MAX_POLICY_WITNESSES} witnesses`,
      text: many,
      line: MAX_POLICY_WITNESSES + 1,
      message: /more than 32/,
    },
  ];
  for (const { desc, text, line, message } of cases) {
    await t.step(desc, () => {
      assert.throws(() => parseWitnessPolicy(text), (error: unknown) => {
        assert.ok(error instanceof PolicyError, String(error));
        assert.equal(error.line, line);
        assert.match(error.message, new RegExp(`^line ${line}: `));
        assert.match(error.message, message);
        return true;
      });
    });
  }
});

Deno.test("readConfig reads WITNESS_POLICY's file, and a bad one stops the start", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  const files: Record<string, string> = {
    "good.policy": `# one witness\nwitness A ${A} https://a.example\nquorum A\n`,
    "bad.policy": `witness A ${A} https://a.example\nwitness B ${B}\nwitness B ${B} https://b\n`,
  };
  const readTextFile = (path: string) => {
    if (!(path in files)) throw new Deno.errors.NotFound(`No such file: "${path}"`);
    return files[path];
  };
  assert.equal(readConfig(env({}), { readTextFile }).witnessPolicy, null);
  const { witnessPolicy } = readConfig(env({ WITNESS_POLICY: "good.policy" }), { readTextFile });
  assert.equal(witnessPolicy?.path, "good.policy");
  assert.deepEqual(witnessPolicy?.witnesses.map((w) => w.url), ["https://a.example"]);
  assert.deepEqual(witnessPolicy?.notes, [
    'line 3: a "quorum" line is not used by the server, ignored',
  ]);
  assert.throws(
    () => readConfig(env({ WITNESS_POLICY: "bad.policy" }), { readTextFile }),
    /^Error: WITNESS_POLICY "bad\.policy" line 3: the name "B" is used twice$/,
  );
  assert.throws(
    () => readConfig(env({ WITNESS_POLICY: "missing.policy" }), { readTextFile }),
    /WITNESS_POLICY "missing\.policy" cannot be read: No such file/,
  );
});
