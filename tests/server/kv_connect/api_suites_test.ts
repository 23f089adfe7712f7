// The API suites again, over KV Connect: every `Deno.openKv(":memory:")` of the suites below opens
// a fresh database of a real KV Connect server (tests/helpers/kv_connect_server.ts, denokv's own
// data path and limits) instead, so each call of protocol §4, the head signer, the rounds, the
// lab's practice ledger and the witnesses' cosignatures run over the network protocol hosted
// Deno KV speaks. Suites that open a KV file keep it: they test several processes on one file.
import { onKvConnect } from "../../helpers/kv_connect_suites.ts";

await onKvConnect("suite", "the suites below run on KV Connect databases");

await import("../api_test.ts");
await import("../api/vote_test.ts");
await import("../head_test.ts");
await import("../api/rounds_test.ts");
await import("../api/round_phases_test.ts");
await import("../api/round_close_test.ts");
await import("../api/cosignature_test.ts");
await import("../store/lab_test.ts");
await import("../store/directory_test.ts");
await import("../sealer_test.ts");
await import("../store/sealing_test.ts");
await import("../round_sealer_test.ts");
await import("../witness_push_test.ts");
await import("../api/log_test.ts");
await import("../store/concurrency_test.ts");
await import("../attack_test.ts");
