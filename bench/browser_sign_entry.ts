// Browser side of bench/browser_sign.ts: times the straightforward signer and lib/'s signRing in
// the page, interleaved so both see the same drift, on rings of the given size.
import { signRing, verifyRing } from "../lib/protocol/ring_signature.ts";
import { baselineSign, baselineVerify } from "./baseline_lsag.ts";
import { ringFixture } from "./ring_fixture.ts";

/** Median of the samples, in ms. */
function median(samples: number[]): number {
  const sorted = samples.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Signs `rounds` times with each signer; answers each signer's median time in ms. */
function signBench(n: number, rounds: number): { baselineMs: number; libMs: number } {
  const { ring, seed, message } = ringFixture(n);
  // Each signer's output must verify under the other's verifier, or the comparison means nothing.
  if (!baselineVerify(signRing({ ring, seed, message }), message)) {
    throw new Error("lib → baseline");
  }
  if (!verifyRing(baselineSign(ring, seed, message), message)) throw new Error("baseline → lib");
  const baseline: number[] = [];
  const lib: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Alternate which signer goes first, so neither always runs on a warmer cache.
    const order = i % 2 === 0 ? ["baseline", "lib"] : ["lib", "baseline"];
    for (const which of order) {
      const started = performance.now();
      if (which === "baseline") baselineSign(ring, seed, message);
      else signRing({ ring, seed, message });
      (which === "baseline" ? baseline : lib).push(performance.now() - started);
    }
  }
  return { baselineMs: median(baseline), libMs: median(lib) };
}

(globalThis as { signBench?: typeof signBench }).signBench = signBench;
