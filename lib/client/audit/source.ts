/**
 * Browser-safe. What the audit reads from: the calls it makes of a live server's API client, or of
 * an election record read from a file (lib/client/audit/election_record_source.ts, protocol §4.8).
 * @module
 */
import type { ApiClient } from "../api_client.ts";
import type { RoundGroupRule } from "./groups.ts";
import type { RoundCardsRead } from "./cards.ts";

/**
 * The calls the audit makes, and all it needs of a source: the API client of a live server, or an
 * election record read from a file (lib/client/audit/election_record_source.ts, protocol §4.8).
 * A round's source also answers its group rule (./groups.ts, protocol §2.8): every vote's ring must
 * then be one of its groups. Round 1 has none (no `groupRule`, or null). A carded round's source
 * answers its card set (`cards`, protocol §2.11); an open round's null.
 */
export type AuditSource =
  & Pick<
    ApiClient,
    "serverKey" | "checkpoint" | "blockStatus" | "keys" | "blocks" | "blockVotes" | "tally"
  >
  & {
    groupRule?: () => Promise<RoundGroupRule | null>;
    cards?: () => Promise<RoundCardsRead | null>;
  };
