/**
 * The round form's phase fields (page §14.3): the fewest keys voting needs, the seconds after which
 * voting opens by itself, and whether late joiners vote in groups of their own.
 * @module
 */

/** The fields as typed. */
export type PhaseInputValues = { minVoters: string; joinSeconds: string; lateJoiners: boolean };

/** The phase fields of `POST /api/rounds` (protocol §4.9). */
export type PhaseFields = { minVoters: number; joinSeconds?: number; lateJoiners: boolean };

/**
 * The body fields of `values`, or what is wrong: `minVoters` an integer 8–64, `joinSeconds` empty
 * (the presenter opens voting) or an integer 10–600.
 */
export function phaseFormFields(
  values: PhaseInputValues,
): { ok: true; fields: PhaseFields } | { ok: false; problem: string } {
  const minVoters = Number(values.minVoters);
  if (!Number.isInteger(minVoters) || minVoters < 8 || minVoters > 64) {
    return { ok: false, problem: "the fewest voters must be a whole number from 8 to 64" };
  }
  const fields: PhaseFields = { minVoters, lateJoiners: values.lateJoiners };
  if (values.joinSeconds.trim() === "") return { ok: true, fields };
  const joinSeconds = Number(values.joinSeconds);
  if (!Number.isInteger(joinSeconds) || joinSeconds < 10 || joinSeconds > 600) {
    return { ok: false, problem: "the joining time must be a whole number of seconds, 10 to 600" };
  }
  return { ok: true, fields: { ...fields, joinSeconds } };
}

/** The three inputs. */
export function PhaseInputs(
  { values, onChange }: { values: PhaseInputValues; onChange(values: PhaseInputValues): void },
) {
  const text = (name: "minVoters" | "joinSeconds") => (event: Event) =>
    onChange({ ...values, [name]: (event.target as HTMLInputElement).value });
  return (
    <>
      <label>
        Fewest voters before voting opens (8 to 64)
        <input
          type="number"
          name="minVoters"
          min={8}
          max={64}
          value={values.minVoters}
          onInput={text("minVoters")}
        />
      </label>
      <label>
        Open voting by itself after (seconds, 10 to 600; empty: you open it)
        <input
          type="number"
          name="joinSeconds"
          min={10}
          max={600}
          value={values.joinSeconds}
          onInput={text("joinSeconds")}
        />
      </label>
      <label class="round-form-check">
        <input
          type="checkbox"
          name="lateJoiners"
          checked={values.lateJoiners}
          onChange={(event) =>
            onChange({ ...values, lateJoiners: (event.target as HTMLInputElement).checked })}
        />{" "}
        Let late joiners vote, in groups of their own
      </label>
    </>
  );
}
