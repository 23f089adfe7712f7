/**
 * Browser-safe. What every section of the bulletin board receives: the board's one state, and the
 * type of a section component.
 * @module
 */
import type { BulletinState } from "./state.ts";

/** Props of a bulletin board section. */
export type SectionProps = { bulletin: BulletinState };
