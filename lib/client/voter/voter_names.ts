/**
 * Browser-safe. Generated voter names from faker's English locale, loaded on demand at the first
 * 'Generate A new Voter' click, because faker is most of the page's weight.
 * @module
 */
import { fakerEN } from "@faker-js/faker";
import type { PersonName } from "./voters.ts";

/** A random first, middle and last name. */
export function fakePersonName(): PersonName {
  return {
    first: fakerEN.person.firstName(),
    middle: fakerEN.person.middleName(),
    last: fakerEN.person.lastName(),
  };
}
