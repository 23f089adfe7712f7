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
  /** True while an action runs: submitting waits. */
  working: boolean;
};

/** The vote form, shown once the voter's key has an id. */
export default function VoteSection(
  { voteLine, tagLine, content, onContent, onSubmit, working }: VoteSectionProps,
) {
  return (
    <form class="section" data-section="vote" onSubmit={onSubmit}>
      <h3>VOTE MANAGEMENT</h3>
      <StatusLine kind="vote" line={voteLine} />
      <input
        type="text"
        placeholder="Vote Content"
        value={content}
        onInput={(event) => onContent((event.target as HTMLInputElement).value)}
      />
      <button type="submit" disabled={working}>Submit Vote</button>
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
