/**
 * "Sealed with k ballots of your group in block h" under a verified vote's anonymity line in a
 * round with phases (page §14.6, §14.8, protocol §7.4). A quiet phone reads its block's count of
 * ballots per group once (`GET …/block/id/{h}/groups`, one small read the same for every phone);
 * any other page reads the block's votes once and counts those signed over the vote's ring.
 * @module
 */
import { useEffect, useState } from "react";
import { type ApiClient, readPages } from "../../lib/client/api_client.ts";
import {
  ballotsOfRing,
  sealedWithCount,
  sealedWithText,
} from "../../lib/client/relay/sealed_with.ts";

/**
 * Props: the API of the vote's round, its block and its ring; `group`, the index of the vote's
 * group, on a quiet phone (null: count the block's votes).
 */
export type SealedWithProps = {
  api: ApiClient;
  height: number;
  ring: readonly string[];
  group?: number | null;
};

/** The line, once the block is read; nothing before or when it cannot be. */
export default function SealedWith({ api, height, ring, group = null }: SealedWithProps) {
  const [k, setK] = useState<number | null>(null);
  useEffect(() => {
    let live = true;
    const count = group === null
      ? readPages(api.blockVotes(height)).then(({ items }) => ballotsOfRing(items, ring))
      : api.blockGroups(height).then((served) => sealedWithCount(served, { height, group, ring }));
    count.then(
      (counted) => live && setK(counted),
      (error) => console.error(`Block ${height}'s ballots could not be counted: ${error.message}`),
    );
    return () => {
      live = false;
    };
  }, [height, group]);
  if (k === null) return null;
  return <p class="ring-sealed-with" data-sealed-with={k}>{sealedWithText(k, height)}</p>;
}
