// A verification worker module that loads but never says it is ready, as one stuck in its start
// would: for the test of the pool's start deadline. A worker module: never import it.
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
self.onmessage = () => {};
