/**
 * The selected block (chosen on the board, not the protocol's open block): its fields with the
 * browser's verdict on its hash, and its votes in leaf order.
 * @module
 */
import type { ComponentChildren } from "preact";
import Hex from "./Hex.tsx";
import SignatureBadge from "./SignatureBadge.tsx";
import type { BlockRecord } from "../../lib/protocol/schemas.ts";
import { tagOfSignature } from "../../lib/protocol/signature_fields.ts";
import type { SectionProps } from "./section.ts";
import { useSignatureStatus } from "./signature_status.ts";

/** Nothing until a block is chosen; then its fields and its votes. */
export default function BlockSection({ bulletin }: SectionProps) {
  const selected = bulletin.selected.value;
  const block = bulletin.blocks.value.find((b) => b.height === selected);
  if (block === undefined) return null;
  return (
    <section class="bulletin-section" aria-labelledby="block-title" data-block={block.height}>
      <h2 id="block-title">Block {block.height}</h2>
      <BlockFields block={block} hashOk={bulletin.checks.value.get(block.height)?.hashOk} />
      {block.height === 0
        ? <p>The genesis block holds no votes.</p>
        : <BlockVotes bulletin={bulletin} height={block.height} />}
    </section>
  );
}

function BlockFields({ block, hashOk }: { block: BlockRecord; hashOk: boolean | undefined }) {
  return (
    <dl class="block-fields">
      <Field term="Closed">{new Date(block.timestamp).toISOString()}</Field>
      <Field term="Size">{block.size}</Field>
      <Field term="Merkle root">
        <Hex value={block.merkle_root} />
      </Field>
      <Field term="Previous hash">
        <Hex value={block.prev_hash} />
      </Field>
      <Field term="Hash">
        <Hex value={block.hash} /> <HashVerdict hashOk={hashOk} />
      </Field>
    </dl>
  );
}

/** The browser's verdict on a block's hash: neutral while it is still being checked. */
export function HashVerdict({ hashOk }: { hashOk: boolean | undefined }) {
  if (hashOk === undefined) return <span class="summary-checking">checking…</span>;
  return hashOk
    ? <span class="summary-ok">matches its fields</span>
    : <span class="summary-bad">does not match its fields</span>;
}

function Field({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

/**
 * The block's votes read so far, each with its signature status (verified in this browser) and a
 * button to check its signature and proof, and a way to more.
 */
function BlockVotes({ bulletin, height }: SectionProps & { height: number }) {
  const loaded = bulletin.votes.value.get(height);
  const signatureOf = useSignatureStatus(loaded?.entries ?? []);
  const open = bulletin.openVote.value?.voteId;
  return (
    <>
      <table class="votes">
        <thead>
          <tr>
            <th>Leaf</th>
            <th>Payload</th>
            <th>Tag</th>
            <th>Ring</th>
            <th>Signature</th>
            <th>Proof</th>
          </tr>
        </thead>
        <tbody>
          {(loaded?.entries ?? []).map((e) => (
            <tr
              key={e.voteId}
              data-vote={e.voteId}
              class={open === e.voteId ? "vote-open" : undefined}
            >
              <td class="vote-leaf">{e.index}</td>
              <td class="vote-payload">{e.vote.payload}</td>
              <td>
                <Hex value={tagOfSignature(e.vote.signature) ?? "(malformed)"} />
              </td>
              <td class="vote-ring">
                {e.vote.publicKeys.map((key) => <Hex key={key} value={key} />)}
              </td>
              <td>
                <SignatureBadge finding={signatureOf(e)} />
              </td>
              <td>
                <button type="button" onClick={() => bulletin.openProof(height, e.voteId)}>
                  Check proof
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {loaded !== undefined && loaded.entries.length < loaded.total && (
        <button
          type="button"
          onClick={() => bulletin.moreVotes(height)}
        >
          More votes ({loaded.entries.length} of {loaded.total})
        </button>
      )}
    </>
  );
}
