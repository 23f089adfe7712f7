// The alarms a page raises, besides a fork, when the server's signed heads cannot be trusted
// (protocol §4 "Signed heads"): a changed server key, blocks without a valid signature, a chain
// that went backwards. Each in plain words, red, like the fork alert.
import type { HeadAlert } from "../lib/client/log/head_alerts.ts";

/** One red box per alert of the fork watch. */
export default function HeadAlerts({ alerts }: { alerts: readonly HeadAlert[] }) {
  return (
    <>
      {alerts.map((alert) => (
        <section
          key={alert.kind}
          class="head-alert"
          role="alert"
          data-head-alert={alert.kind}
        >
          <h2>{alert.title}</h2>
          <p>{alert.text}</p>
        </section>
      ))}
    </>
  );
}
