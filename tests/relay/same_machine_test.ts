// Whether the relay runs on its gateway's machine: loopback, an own address, or a name that
// resolves to one; another machine's address, or a name that does not resolve, is not.
import assert from "node:assert/strict";
import { isSameMachine } from "../../relay/same_machine.ts";

Deno.test("sameMachine: loopback, own addresses and names resolving to them", async () => {
  const own = ["127.0.0.1", "192.168.1.20", "fe80::1"];
  const names: Record<string, string[]> = {
    "vote.lan": ["192.168.1.20"],
    "server.lan": ["192.168.1.30"],
    "loop.example": ["127.0.0.1"],
  };
  const resolve = (name: string) =>
    names[name] ? Promise.resolve(names[name]) : Promise.reject(new Error("NXDOMAIN"));
  for (
    const host of ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "192.168.1.20", "[fe80::1]"]
  ) {
    assert.equal(await isSameMachine(host, own, resolve), true, host);
  }
  assert.equal(await isSameMachine("vote.lan", own, resolve), true);
  assert.equal(await isSameMachine("loop.example", own, resolve), true);
  for (const host of ["192.168.1.30", "server.lan", "unknown.example", "[2001:db8::1]"]) {
    assert.equal(await isSameMachine(host, own, resolve), false, host);
  }
});
