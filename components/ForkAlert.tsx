// The alarm a page raises when the server has signed two histories (protocol §4 "Signed heads"):
// both heads side by side, what that proves in plain words, and the evidence as a JSON download
// that anyone can check with the server's public key.
import {
  type AnyForkEvidence,
  checkpointSize,
  evidenceFile,
} from "../lib/client/log/head_alerts.ts";

/**
 * The fork evidence, explained, with its download link; `signer` names whose key signed both
 * heads: the server's on the pages, the lens's in the attack lab (protocol §4.7).
 */
export default function ForkAlert(
  { evidence, signer = "server" }: { evidence: AnyForkEvidence; signer?: "server" | "lens" },
) {
  const keyName = signer === "server" ? "the server's key" : "the lab lens's key";
  const liar = signer === "server"
    ? "the server"
    : "the lens, the lab's stand-in for a lying server,";
  const file = evidenceFile(evidence);
  const href = `data:application/json;charset=utf-8,${encodeURIComponent(file.text)}`;
  if (!("heads" in evidence)) {
    const [before, now] = evidence.checkpoints.map(checkpointSize);
    const same = before === now;
    return (
      <section class="fork-alert" role="alert" data-fork-size={now}>
        <h2>The server showed two different histories</h2>
        <p>
          {same
            ? `This browser accepted a signed summary of the server's history at ${before} blocks; the server now signs another summary of those same ${now} blocks.`
            : `This browser accepted a signed summary of the server's history at ${before} blocks; the server now signs one at ${now} blocks, and its own proof that the second extends the first fails.`}
          {" "}
          Both are signed with {keyName}, so this is proof — not a suspicion — that {liar}{" "}
          rewrote its history.
        </p>
        <dl class="fork-heads">
          <dt>Checkpoint seen before</dt>
          <dd class="fork-checkpoint">{evidence.checkpoints[0]}</dd>
          <dt>Checkpoint shown now</dt>
          <dd class="fork-checkpoint">{evidence.checkpoints[1]}</dd>
          <dt>{signer === "server" ? "Server key" : "Lens key"}</dt>
          <dd class="hex">{evidence.key}</dd>
        </dl>
        <a class="button fork-download" href={href} download={file.name}>
          Download the evidence (JSON)
        </a>
      </section>
    );
  }
  const [a, b] = evidence.heads;
  return (
    <section class="fork-alert" role="alert" data-fork-height={a.height}>
      <h2>The server showed two different histories</h2>
      <p>
        This browser saw block {a.height}{" "}
        with one fingerprint; the server now shows another. Both are signed with{" "}
        {keyName}, so this is proof — not a suspicion — that {liar} rewrote its history.
      </p>
      <dl class="fork-heads">
        <dt>Block {a.height}, seen before</dt>
        <dd class="hex">{a.hash}</dd>
        <dt>Block {b.height}, shown now</dt>
        <dd class="hex">{b.hash}</dd>
        <dt>{signer === "server" ? "Server key" : "Lens key"}</dt>
        <dd class="hex">{evidence.key}</dd>
      </dl>
      <a class="button fork-download" href={href} download={file.name}>
        Download the evidence (JSON)
      </a>
    </section>
  );
}
