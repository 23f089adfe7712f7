/**
 * Browser-safe. Which group of a round's state holds a key (page §14.8).
 * @module
 */

/** The index of the group holding key `ownId` in `groups`, or null. */
export function groupIndexOf(groups: readonly (readonly number[])[], ownId: number): number | null {
  const index = groups.findIndex((ids) => ids.includes(ownId));
  return index < 0 ? null : index;
}
