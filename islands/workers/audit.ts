// The board's audit worker entry: the worker of lib/client/audit/check_worker.ts, bundled for
// the page.
import "../../lib/client/audit/check_worker.ts";
