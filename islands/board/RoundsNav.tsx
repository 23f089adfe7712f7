/**
 * The rounds on the board (protocol §4.9): what the round shown asks, and every round linked to its
 * board, the one shown and the one taking votes marked. A server with only round 1 shows nothing.
 * @module
 */
import { useRounds } from "../hooks/use_rounds.ts";
import { roundLinks, roundName, roundQuestion } from "../../lib/client/board/rounds.ts";

/** The question of round `shown` and the list of rounds, once there is more than one. */
export default function RoundsNav({ shown }: { shown: number }) {
  const list = useRounds();
  if (list === null || (list.rounds.length < 2 && shown === 1)) return null;
  const round = list.rounds.find((r) => r.id === shown);
  const links = roundLinks(list, shown);
  return (
    <div class="bulletin-rounds">
      {round && (
        <p class="bulletin-question" data-round-question={round.question}>
          {roundName(shown)}:{" "}
          {round.question.trim() === "" ? "a free-text vote." : <q>{roundQuestion(round)}</q>}
          {round.choices.length > 0 && (
            <span class="bulletin-choices">
              {` Choices: ${round.choices.map((c) => `“${c}”`).join(", ")}.`}
            </span>
          )}
        </p>
      )}
      {links.length > 1 && (
        <nav aria-label="Rounds">
          <ol class="round-list">
            {links.map((link) => (
              <li
                key={link.id}
                class={`round-item${link.shown ? " round-shown" : ""}`}
                data-round={link.id}
                data-shown={String(link.shown)}
                data-current={String(link.current)}
              >
                <a href={link.href} aria-current={link.shown ? "page" : undefined}>
                  {roundName(link.id)}
                </a>{" "}
                <span class="round-item-question" title={link.question}>{link.question}</span>
                {link.shown && <span class="round-mark">shown</span>}
                {link.current && <span class="round-mark round-mark-current">taking votes</span>}
              </li>
            ))}
          </ol>
        </nav>
      )}
    </div>
  );
}
