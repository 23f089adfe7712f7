/**
 * A line under a panel's status: "working" while the browser signs or verifies, "problem" (red)
 * when a vote could not be made, with the reason.
 */
export default function Notice({ tone, text }: { tone: "working" | "problem"; text: string }) {
  return tone === "working"
    ? <p class="notice notice-working" role="status" aria-live="polite">{text}</p>
    : <p class="notice notice-problem status-red" role="alert">{text}</p>;
}
