// main.ts as an edge runtime without Web Workers (Deno Deploy) runs it: the `Worker` global is
// removed before main.ts loads, so the server must verify on its own thread.
delete (globalThis as { Worker?: unknown }).Worker;
await import("../../main.ts");
