/**
 * The phone's card code (page §14.7), one chunk loaded on demand: joining with a card in a carded
 * round, and reading a card from the address. The presenter's card code (making, printing) loads
 * with the presenter's controls.
 * @module
 */
export { default as CardJoin } from "./CardJoin.tsx";
export { readPhoneCard } from "../hooks/phone_card.ts";
