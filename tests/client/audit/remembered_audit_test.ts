/**
 * An audit that remembers (lib/client/audit/remembered_audit.ts, page §10.8) over in-memory KV:
 * a passing audit leaves its memory, the next one verifies no vote when nothing was sealed and only
 * the new blocks' votes after, with the same report and tally as a full audit; a memory the server
 * contradicts (a rewritten old block, a rewritten head, another key, a shorter chain, a directory
 * that changed) fails, and one kept in storage is read back only whole.
 * @module
 */
import assert from "node:assert/strict";
import { type ApiClient, createApiClient } from "../../../lib/client/api_client.ts";
import { auditLedger, type AuditOptions } from "../../../lib/client/audit/audit.ts";
import {
  type AuditMemory,
  memorySource,
  readAuditMemory,
  storedMemory,
} from "../../../lib/client/audit/remembered_audit.ts";
import { inThreadChecker, type VoteChecker } from "../../../lib/client/audit/vote_checks.ts";
import { decodeSignature } from "../../../lib/protocol/signature_wire.ts";
import { bytesToHex } from "../../../lib/protocol/bytes.ts";
import { sealNextBlock } from "../../../server/sealer.ts";
import { inMemoryApp } from "../../helpers/in_memory_app.ts";
import { makeVoters, ringFor, signedVote, type TestVoter } from "../../helpers/ledger_fixtures.ts";
import { tamperingTransport } from "../../helpers/tampering_proxy.ts";

/** A checker counting the votes it was given to verify. */
function countingChecker(): { checker: VoteChecker; verified: () => number } {
  const inner = inThreadChecker();
  let verified = 0;
  return {
    checker: (votes) => {
      verified += votes.length;
      return inner(votes);
    },
    verified: () => verified,
  };
}

/** Casts one sealed block of `payloads` from voters `from` on, at `at` (ms). */
async function sealBlock(
  { api, store, voters }: Awaited<ReturnType<typeof ledger>>,
  { from, payloads, at }: { from: number; payloads: string[]; at: number },
) {
  for (const [i, payload] of payloads.entries()) {
    const signer = voters[from + i];
    await api.submitVote(signedVote(signer, ringFor(signer, voters, 3, from + i), payload));
  }
  assert.equal((await sealNextBlock(store, at)).length, 1);
}

async function ledger() {
  const { kv, store, app, api } = await inMemoryApp();
  const voters: TestVoter[] = makeVoters(12);
  for (const v of voters) await api.registerKey({ key: v.key });
  return { kv, store, app, api, voters };
}

/** The audit of `api` with a counting checker: the report and how many votes it verified. */
async function audited(api: ApiClient, opts: AuditOptions = {}) {
  const { checker, verified } = countingChecker();
  const source = opts.memory
    ? memorySource(api, opts.memory, { readAllBlocks: opts.verifyAll })
    : api;
  const report = await auditLedger(source, { ...opts, checker });
  return { report, verified: verified() };
}

Deno.test("a remembered audit verifies only the votes sealed since", async (t) => {
  const l = await ledger();
  try {
    await sealBlock(l, { from: 0, payloads: ["yes", "no", "yes"], at: 1_700_000_060_000 });
    await sealBlock(l, { from: 3, payloads: ["no"], at: 1_700_000_120_000 });
    const first = await audited(l.api);
    assert.deepEqual(first.report.failures, []);
    assert.equal(first.verified, 4);
    assert.equal(first.report.remembered, 0);
    const memory = first.report.memory!;
    assert.equal(memory.height, 2);
    assert.equal(memory.votes, 4);
    assert.equal(memory.keys.length, 12);
    assert.deepEqual([...memory.tally], [["no", 2], ["yes", 2]]);

    await t.step("nothing new: no vote verified, the same report", async () => {
      const again = await audited(l.api, { memory });
      assert.deepEqual(again.report.failures, []);
      assert.equal(again.verified, 0);
      assert.equal(again.report.votes, 4);
      assert.equal(again.report.remembered, 4);
      assert.deepEqual(again.report.tally, first.report.tally);
      assert.equal(again.report.memory?.height, 2);
    });

    let grown: AuditMemory;
    await t.step("a block later: its votes alone verified, the tally counts all", async () => {
      await sealBlock(l, { from: 4, payloads: ["no", "maybe"], at: 1_700_000_180_000 });
      const later = await audited(l.api, { memory });
      assert.deepEqual(later.report.failures, []);
      assert.equal(later.verified, 2);
      assert.equal(later.report.votes, 6);
      assert.equal(later.report.remembered, 4);
      assert.deepEqual(later.report.tally, (await audited(l.api)).report.tally);
      grown = later.report.memory!;
      assert.equal(grown.height, 3);
      assert.equal(grown.votes, 6);
      assert.equal(grown.tags.size, 6);
    });

    await t.step("verifyAll: every vote verified, still held to the memory", async () => {
      const all = await audited(l.api, { memory: grown, verifyAll: true });
      assert.deepEqual(all.report.failures, []);
      assert.equal(all.verified, 6);
      assert.equal(all.report.remembered, 0);
    });

    await t.step("a new vote reusing a remembered tag fails", async () => {
      await sealBlock(l, { from: 6, payloads: ["yes"], at: 1_700_000_240_000 });
      const [{ vote }] = (await l.api.blockVotes(4)(0, 1)).items;
      const tag = bytesToHex(decodeSignature(vote.signature).tag);
      const forged = { ...grown, tags: new Map([...grown.tags, [tag, 1]]) };
      const { report } = await audited(l.api, { memory: forged });
      assert.equal(report.ok, false);
      assert.deepEqual(report.failures.map((f) => f.kind), ["duplicate-tag"]);
      assert.equal(report.memory, null);
    });

    // deno-lint-ignore no-explicit-any
    const lying = (edit: (path: string, body: any) => void) =>
      createApiClient({ fetch: tamperingTransport(l.app.request, edit) });
    await t.step("the blocks below the remembered head are the memory's, not read", async () => {
      const liar = lying((path, body) => {
        if (path !== "/api/blocks") return;
        for (const b of body.blocks) if (b.height === 1) b.hash = "ab".repeat(32);
      });
      // Block 1 is answered from the memory: the head above it (block 3) holds it by its links.
      const { report } = await audited(liar, { memory: grown });
      assert.deepEqual(report.failures, []);
      // Audited all again, every block is read, and the rewritten one compared with the memory.
      const all = await audited(liar, { memory: grown, verifyAll: true });
      assert.ok(
        all.report.failures.some((f) =>
          f.kind === "remembered-hash" && f.height === 1 && f.remembered === grown.blocks[1].hash
        ),
        JSON.stringify(all.report.failures),
      );
    });
    await t.step("a rewritten head fails, compared with the memory's", async () => {
      const liar = lying((path, body) => {
        if (path !== "/api/blocks") return;
        for (const b of body.blocks) if (b.height === 3) b.hash = "ab".repeat(32);
      });
      const { report, verified } = await audited(liar, { memory: grown });
      assert.equal(report.ok, false);
      assert.ok(
        report.failures.some((f) =>
          f.kind === "remembered-hash" && f.height === 3 && f.remembered === grown.blocks[3].hash
        ),
        JSON.stringify(report.failures),
      );
      assert.equal(report.memory, null);
      assert.ok(verified <= 1);
    });
    await t.step(
      "the remembered head served with another signature is verified again",
      async () => {
        const liar = lying((path, body) => {
          if (path !== "/api/blocks") return;
          for (const b of body.blocks) if (b.height === 3) b.head_signature = "00".repeat(64);
        });
        const { report } = await audited(liar, { memory: grown });
        assert.deepEqual(report.failures, [
          { kind: "head-signature", height: 3, key: grown.key },
        ]);
      },
    );
    await t.step("a chain shorter than the memory fails", async () => {
      const liar = lying((path, body) => {
        if (path === "/api/block/status") body.height = 1;
      });
      const { report } = await audited(liar, { memory: grown });
      assert.equal(report.ok, false);
      assert.ok(report.failures.some((f) => f.kind === "remembered-above"));
    });
    await t.step("another key fails at once", async () => {
      const other = { ...grown, key: "11".repeat(32) };
      const { report, verified } = await audited(l.api, { memory: other });
      assert.deepEqual(report.failures.map((f) => f.kind), ["remembered-key"]);
      assert.equal(verified, 0);
    });
    await t.step("a directory that does not extend the remembered one fails", async () => {
      const changed = { ...grown, keys: grown.keys.with(-1, "22".repeat(32)) };
      const { report } = await audited(l.api, { memory: changed });
      assert.equal(report.ok, false);
      const [stopped] = report.failures;
      assert.equal(stopped.kind, "stopped");
    });
  } finally {
    l.kv.close();
  }
});

Deno.test("a memory is read back from storage only whole", async () => {
  const l = await ledger();
  try {
    await sealBlock(l, { from: 0, payloads: ["yes", "no"], at: 1_700_000_060_000 });
    const { report } = await audited(l.api);
    const memory = report.memory!;
    const stored = structuredClone(storedMemory(memory));
    assert.deepEqual(readAuditMemory(stored), memory);
    const broken: [string, unknown][] = [
      ["an earlier version", { ...stored, version: 1 }],
      ["a block missing", { ...stored, blocks: stored.blocks.slice(1) }],
      [
        "a block without its header",
        {
          ...stored,
          blocks: stored.blocks.map(({ height, hash, head_signature }) => ({
            height,
            hash,
            head_signature,
          })),
        },
      ],
      ["a head that is not the last block", { ...stored, hash: "cd".repeat(32) }],
      ["a tag missing", { ...stored, tags: new Map([...stored.tags].slice(1)) }],
      ["a tag above the head", { ...stored, tags: new Map([...stored.tags].map(([t]) => [t, 9])) }],
      ["counts that do not add up", { ...stored, votes: 3 }],
      ["not an object", "memory"],
      ["nothing", undefined],
    ];
    for (const [desc, value] of broken) assert.equal(readAuditMemory(value), null, desc);
  } finally {
    l.kv.close();
  }
});
