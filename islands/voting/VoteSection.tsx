/**
 * A voter's vote management (page §2): the vote status line, the content field and the submit
 * button, and the panel's check of its own tag on the bulletin board.
 * @module
 */
import StatusLine from "./StatusLine.tsx";
import type { ColouredLine as Line, TagCheck, VoteLine } from "../../lib/client/voter/status.ts";

/** Props of {@link VoteSection}: the lines shown, the field's content, and the handlers. */
export type VoteSectionProps = {
  voteLine: VoteLine;
  tagLine: Line<TagCheck> | null;
  content: string;
  onContent(content: string): void;
  onSubmit(event: Event): void;
  /** The round's choices: buttons in place of the field; none for free text. */
  choices: readonly string[];
  onChoice(choice: string): void;
  /** Why the vote must wait (too few voters yet), in words; null when it need not. */
  waiting: string | null;
  /** The choice waiting to be sent, if any. */
  queued: string | null;
  /** False when a kept choice will not be sent by itself (a late key of a round without them). */
  keptChoice?: boolean;
  /** True while an action runs: submitting waits. */
  working: boolean;
};

/** The vote form, shown once the voter's key has an id. */
export default function VoteSection(
  {
    voteLine,
    tagLine,
    content,
    onContent,
    onSubmit,
    choices,
    onChoice,
    waiting,
    queued,
    keptChoice = true,
    working,
  }: VoteSectionProps,
) {
  return (
    <form class="section" data-section="vote" onSubmit={onSubmit}>
      <h3>VOTE MANAGEMENT</h3>
      <StatusLine kind="vote" line={voteLine} />
      {waiting !== null && (
        <p class="waiting-line" data-waiting-for="" role="status" aria-live="polite">
          {waiting}
          {queued !== null && keptChoice && ` Your choice "${queued}" is sent by itself then.`}
        </p>
      )}
      {choices.length > 0
        ? (
          <div class="choices" role="group" aria-label="Your answer">
            {choices.map((choice) => (
              <button
                key={choice}
                type="button"
                class={`choice${queued === choice ? " choice-queued" : ""}`}
                data-choice={choice}
                aria-pressed={queued === choice || content === choice}
                onClick={() => onChoice(choice)}
                disabled={working}
              >
                {choice}
              </button>
            ))}
          </div>
        )
        : (
          <>
            <input
              type="text"
              placeholder="Vote Content"
              value={content}
              onInput={(event) => onContent((event.target as HTMLInputElement).value)}
            />
            <button type="submit" disabled={working}>Submit Vote</button>
          </>
        )}
      {tagLine !== null && (
        <p
          class={`tag-check status-${tagLine.colour}`}
          data-kind="tag"
          data-status={tagLine.status}
        >
          {tagLine.text}
        </p>
      )}
    </form>
  );
}
