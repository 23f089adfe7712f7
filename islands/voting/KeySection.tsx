/**
 * A voter's key management (page §2): the key status line and the buttons that generate and
 * register keys.
 * @module
 */
import StatusLine from "./StatusLine.tsx";
import type { KeyLine } from "../../lib/client/voter/status.ts";

/** Props of {@link KeySection}: the key's line and the two handlers. */
export type KeySectionProps = {
  keyLine: KeyLine;
  onGenerate(): void;
  onRegister(): void;
  /** True while an action runs: both buttons wait. */
  working: boolean;
};

/** The key section, always shown. */
export default function KeySection({ keyLine, onGenerate, onRegister, working }: KeySectionProps) {
  return (
    <div class="section" data-section="key">
      <h3>KEY MANAGEMENT</h3>
      <StatusLine kind="key" line={keyLine} />
      <div class="actions">
        <button type="button" onClick={onGenerate} disabled={working}>
          Generate new keys
        </button>
        <button type="button" onClick={onRegister} disabled={working}>
          Register A Key
        </button>
      </div>
    </div>
  );
}
