// Browser-safe. The wire shapes of the reads a hall of phones shares (protocol §4.9): a group by
// index, a sealed block's ballots per group, and the round's state, as zod/mini schemas.
import * as z from "zod/mini";
import { Count, Hex32, Id, KeyIds, RoundPhase, Tally } from "./schemas.ts";

/** Spaces only: the padding of a read every phone makes at one length (protocol §7.4). */
const Pad = z.string().check(z.regex(/^ *$/, "must be spaces"));
/**
 * Answer of `GET /api/rounds/{id}/groups/{g}` (protocol §4.9): group `g`'s ids ascending and its
 * keys in that order, padded to one length for every group.
 */
export const RoundGroupRead = z.object({
  group: Count,
  ids: KeyIds,
  keys: z.array(Hex32),
  pad: Pad,
});
/**
 * Answer of `GET /api/rounds/{id}/block/id/{height}/groups` (protocol §4.9): how many ballots of
 * the sealed block were signed over each group, by group index, padded to one length.
 */
export const BlockGroups = z.object({ height: Count, counts: z.array(Count), pad: Pad });
/**
 * Answer of `GET /api/rounds/{id}/state` (protocol §4.9): the one read a phone polls, the same
 * for every phone: the round's phase and groups, the directory's size, the open and the newest
 * sealed block, the tally and the log's checkpoint.
 */
export const RoundState = z.object({
  round: Id,
  current: Id,
  phase: RoundPhase,
  openedAt: z.nullable(Count),
  keysAtOpen: z.nullable(Count),
  groups: z.array(KeyIds),
  pending: KeyIds,
  total: Count,
  intervalMs: Id,
  verifyRate: z.number().check(z.positive("must be positive")),
  sendWindowMs: z.nullable(Count),
  open: z.object({ height: Id, votes: Count, nextSealAt: Count }),
  sealed: z.object({ height: Count, hash: Hex32 }),
  tally: Tally,
  checkpoint: z.string().check(z.maxLength(4096, "must be at most 4,096 characters")),
});
export type RoundState = z.infer<typeof RoundState>;
export type RoundGroupRead = z.infer<typeof RoundGroupRead>;
export type BlockGroups = z.infer<typeof BlockGroups>;
