// The phone's card code (lib/client/voter/card_code.ts, page §14.7) answers as the protocol's
// (lib/protocol/cards.ts) and the page helpers' (lib/client/cards/cards.ts) do: the same reading of
// every code and typo, the same card key, the same admission signature, the same verdict on a
// served set and a round's genesis, including a lying server's.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  admitWithCard,
  cardKeyOf,
  checkRoundSet,
  readCardCode,
} from "../../../lib/client/voter/card_code.ts";
import {
  cardAdmission,
  cardFromRandom,
  cardKeyPair,
  describeCardSet,
  parseCardCode,
  verifyCardAdmission,
} from "../../../lib/protocol/cards.ts";
import { checkRoundCardSet } from "../../../lib/client/cards/cards.ts";
import * as chain from "../../../lib/protocol/chain.ts";
import {
  base64urlToBytes,
  bytesToBase64url,
  bytesToHex,
  hexToBytes,
} from "../../../lib/protocol/bytes.ts";

const tenBytes = fc.uint8Array({ minLength: 10, maxLength: 10 });

Deno.test("a code is read as the protocol reads it: forms, typos and their reasons", () => {
  fc.assert(
    fc.property(
      tenBytes,
      fc.nat(20),
      fc.constantFrom(..."0123456789ABCDEFGHJKMNPQRSTVWXYZ*~$=UILOilo -x#"),
      (bytes, at, c) => {
        const { code } = cardFromRandom(bytes);
        const mutated = code.slice(0, at) + c + code.slice(at + 1);
        for (
          const text of [
            code,
            code.toLowerCase(),
            code.replace(/-/g, ""),
            mutated,
            mutated.slice(1),
            "",
          ]
        ) {
          const mine = readCardCode(text);
          const theirs = parseCardCode(text);
          assert.equal(mine.ok, theirs.ok, text);
          if (mine.ok && theirs.ok) {
            assert.equal(mine.code, theirs.code);
            assert.deepEqual(mine.bytes, theirs.bytes);
          } else if (!mine.ok && !theirs.ok) {
            assert.equal(mine.reason, theirs.reason, text);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("the card key and the admission signature are the protocol's", () => {
  fc.assert(
    fc.property(
      tenBytes,
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.integer({ min: 2, max: 2 ** 40 }),
      (bytes, setHash, round) => {
        const pair = cardKeyPair(bytes);
        assert.equal(cardKeyOf(bytes), bytesToBase64url(pair.publicKey));
        const voter = bytesToHex(cardKeyPair(setHash.subarray(0, 10)).publicKey);
        const mine = admitWithCard({
          bytes,
          setSha256: bytesToHex(setHash),
          round,
          voterKey: voter,
        });
        assert.deepEqual(mine, cardAdmission(pair, setHash, round, hexToBytes(voter, 32)));
        assert.ok(
          verifyCardAdmission(
            pair.publicKey,
            base64urlToBytes(mine.sig, 64),
            setHash,
            round,
            hexToBytes(voter, 32),
          ),
        );
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("a served set and a round's genesis get the page helpers' verdict", () => {
  const keys = Array.from({ length: 8 }, (_, i) => {
    const random = new Uint8Array(10);
    random[9] = i + 1;
    return bytesToBase64url(cardKeyPair(cardFromRandom(random).bytes).publicKey);
  });
  const served = { ...describeCardSet(keys.map((key) => base64urlToBytes(key, 32))), keys };
  const committed = chain.genesisBlock(1_700_000_000_000, served.sha256);
  const stranger = bytesToBase64url(cardKeyPair(new Uint8Array(10).fill(9)).publicKey);
  const added = [...keys, stranger];
  const lying = { ...describeCardSet(added.map((key) => base64urlToBytes(key, 32))), keys: added };
  const cases: [string, unknown, unknown][] = [
    ["the committed set", committed, served],
    ["an open round's genesis", chain.genesisBlock(1_700_000_000_000), served],
    ["a set with a card added, hashed afresh", committed, lying],
    ["a set whose hash is not its keys'", committed, { ...served, keys: added }],
    ["a count that is not its keys'", committed, { ...served, count: 9 }],
    ["a malformed key", committed, { ...served, keys: ["x", ...keys.slice(1)] }],
    ["no set", committed, null],
    ["a genesis whose hash is not its fields'", { ...committed, timestamp: 1 }, served],
  ];
  for (const [name, genesis, set] of cases) {
    const mine = checkRoundSet(
      genesis as chain.BlockHeader & { hash: string } as never,
      set,
      chain,
    );
    const theirs = checkRoundCardSet(genesis as never, set);
    const theirsWithHash = theirs.ok && chain.verifyBlockHash(genesis as never)
      ? theirs
      : theirs.ok
      ? { ok: false, reason: "The round's genesis block does not commit to this card set" }
      : theirs;
    assert.deepEqual(mine, theirsWithHash, name);
  }
  assert.equal(checkRoundSet(committed, served, chain).ok, true);
});
