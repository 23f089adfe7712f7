/** The vote payload that makes tests/helpers/fragile_verify_worker.ts fail. */
export const CRASH_PAYLOAD = "crash this worker";
