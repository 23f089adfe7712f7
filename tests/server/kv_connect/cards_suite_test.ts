// The join-card suite again, over KV Connect (tests/helpers/kv_connect_server.ts: denokv's own data
// path and limits, 10 checks a commit, 10 keys a getMany): card sets in chunks, a carded round's
// registrations — four keys and their cards a commit — and every attack of the suite, over the
// network protocol hosted Deno KV speaks.
import { onKvConnect, stopLast } from "../../helpers/kv_connect_suites.ts";

const server = await onKvConnect("cards", "the card suite runs on KV Connect databases");

await import("../api/cards_test.ts");
await import("../store/card_commit_test.ts");

stopLast(server);
