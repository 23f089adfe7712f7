// The open block: its fields with the browser's verdict on its hash, and its votes in leaf order.
import type { ComponentChildren } from "preact";
import Hex from "../../components/Hex.tsx";
import SignatureBadge from "../../components/SignatureBadge.tsx";
import type { BlockRecord } from "../../lib/app/api_client.ts";
import { tagOfSignature } from "../../lib/app/signature_fields.ts";
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
        <Hex value={block.hash} /> {hashOk
          ? <span class="summary-ok">matches its fields</span>
          : <span class="summary-bad">does not match its fields</span>}
      </Field>
    </dl>
  );
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
          {(loaded?.entries ?? []).map((e, position) => (
            <tr
              key={e.voteId}
              data-vote={e.voteId}
              class={open === e.voteId ? "vote-open" : undefined}
            >
              <td>{position}</td>
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
