/**
 * The groups of a round on the board's anonymity section (page §10.10): every group, its key ids
 * and its fingerprint, and the keys pending. A ballot of a round is signed over one whole group,
 * so no other ballot can narrow it below that group.
 * @module
 */
import type { ApiClient } from "../../lib/client/api_client.ts";
import { usePolled } from "../hooks/polling.ts";
import { useGroupFingerprints } from "./group_fingerprints.ts";

/** The groups line of the round `api` reads, read every `pollMs`. */
export default function RoundGroups({ api, pollMs }: { api: ApiClient; pollMs: number }) {
  const served = usePolled(() => api.groups(), pollMs).value;
  const groups = useGroupFingerprints(api, served?.groups ?? []);
  if (served === null) return null;
  if (served.keysAtOpen === null) {
    return (
      <p class="anonymity-groups" data-round-groups="join">
        Voting is not open yet: the groups are fixed when it opens.
      </p>
    );
  }
  const pending = served.pending.length;
  return (
    <div class="anonymity-groups" data-round-groups={served.groups.length}>
      <p>
        Each ballot of this round is signed over one whole group, so the record cannot narrow it
        below its group. {served.keysAtOpen} keys had joined when voting opened.
        {pending > 0 && ` ${pending} ${pending === 1 ? "key waits" : "keys wait"} in no group.`}
      </p>
      <ul>
        {groups.map((group, i) => (
          <li key={group.fingerprint} data-group-fingerprint={group.fingerprint}>
            Group {i + 1}: keys {group.ids[0]}–{group.ids.at(-1)} ({group.ids.length} keys
            {group.ids[0] > served.keysAtOpen! ? ", late joiners" : ""}), fingerprint{" "}
            <code>{group.fingerprint}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}
