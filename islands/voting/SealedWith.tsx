/**
 * "Sealed with k ballots of your group in block h" under a verified vote's anonymity line in a
 * round with phases (page §14.6, protocol §7.4): the block's votes are read once, through the
 * page's transport, and those signed over the vote's ring counted.
 * @module
 */
import { useEffect, useState } from "react";
import { type ApiClient, readPages } from "../../lib/client/api_client.ts";
import { ballotsOfRing, sealedWithText } from "../../lib/client/relay/sealed_with.ts";

/** Props: the API of the vote's round, its block and its ring. */
export type SealedWithProps = { api: ApiClient; height: number; ring: readonly string[] };

/** The line, once the block is read; nothing before or when it cannot be. */
export default function SealedWith({ api, height, ring }: SealedWithProps) {
  const [k, setK] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    readPages(api.blockVotes(height)).then(
      ({ items }) => live && setK(ballotsOfRing(items, ring)),
      (error) => console.error(`Block ${height}'s votes could not be read: ${error.message}`),
    );
    return () => {
      live = false;
    };
  }, [height]);
  if (k === null) return null;
  return <p class="ring-sealed-with" data-sealed-with={k}>{sealedWithText(k, height)}</p>;
}
