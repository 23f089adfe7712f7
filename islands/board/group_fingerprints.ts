/**
 * The fingerprints of a round's groups (protocol §2.8) for the projector and the board: the
 * directory read again whenever the served groups change.
 * @module
 */
import { useEffect, useState } from "react";
import { type ApiClient, readPages } from "../../lib/client/api_client.ts";
import { type RoomGroup, roomGroups } from "../../lib/client/board/room.ts";

/** The fingerprints of `groups`, the directory read again whenever the groups change. */
export function useGroupFingerprints(api: ApiClient, groups: number[][]): RoomGroup[] {
  const [shown, setShown] = useState<RoomGroup[]>([]);
  const key = JSON.stringify(groups);
  useEffect(() => {
    if (groups.length === 0) return;
    let live = true;
    readPages(api.keys).then(
      ({ items }) => {
        if (live) setShown(roomGroups(groups, new Map(items.map((k) => [k.id, k.key]))));
      },
      (error) => console.error(`The key directory could not be read: ${error.message}`),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return shown;
}
