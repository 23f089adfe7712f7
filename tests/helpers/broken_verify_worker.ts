// A verification worker module that fails as it loads, as one would in a broken build: for the
// test that the pool gives up after a few such failures instead of restarting it for ever. A worker
// module: never import it.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
throw new Error("this worker cannot load");
