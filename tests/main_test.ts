// The composition root: `deno task start` with no environment serves the app on port 8000.
import assert from "node:assert/strict";

function portIsFree(port: number): boolean {
  try {
    Deno.listen({ port }).close();
    return true;
  } catch {
    return false;
  }
}

const port8000Free = portIsFree(8000);
if (!port8000Free) console.warn("Skipping the `deno task start` test: port 8000 is busy");

Deno.test({
  name: "`deno task start` with no environment serves the app on port 8000",
  ignore: !port8000Free,
  async fn() {
    const root = new URL("../", import.meta.url).pathname;
    const kvFile = `${root}data/ringvote.kv`;
    const existed = await Deno.stat(kvFile).then(() => true, () => false);
    const keep: Record<string, string> = {};
    for (const name of ["PATH", "HOME", "DENO_DIR"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) keep[name] = value;
    }
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "start"],
      cwd: root,
      env: keep,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = new Response(child.stdout).text();
    const errors = new Response(child.stderr).text();
    try {
      let status: { height: number; openBlock: number } | null = null;
      const deadline = Date.now() + 60_000;
      while (status === null && Date.now() < deadline) {
        try {
          const res = await fetch("http://127.0.0.1:8000/api/block/status");
          assert.equal(res.status, 200);
          assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
          status = await res.json();
        } catch (error) {
          if (error instanceof assert.AssertionError) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      assert.ok(status, "the server answered on port 8000");
      assert.ok(status.height >= 0 && status.openBlock > status.height);
      const missing = await fetch("http://127.0.0.1:8000/api/missing");
      assert.equal(missing.status, 404);
      assert.equal((await missing.json()).error.code, "not_found");
      assert.ok((await Deno.stat(kvFile)).isFile, "the default KV file exists");
    } finally {
      child.kill("SIGTERM");
      await child.status;
      // Leave the default database as it was: remove it only if this start created it.
      if (!existed) {
        for (const suffix of ["", "-shm", "-wal"]) {
          await Deno.remove(kvFile + suffix).catch(() => {});
        }
        await Deno.remove(`${root}data`).catch(() => {}); // only when empty
      }
    }
    assert.match(await output, /listening on http:\/\/localhost:8000\//);
    await errors;
  },
});
