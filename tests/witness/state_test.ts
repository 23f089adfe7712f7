// The witness's state on disk (server/witness/state.ts, key.ts, durable_file.ts): records written
// whole, one file per origin, updates of one origin one at a time, the directory's lock, leftovers
// of a killed writer removed, a record that is not the origin's failing closed, and the key made
// once, kept with mode 0600 and refused when others may read it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { bytesToBase64, bytesToHex, utf8 } from "../../lib/protocol/bytes.ts";
import { sha256 } from "../../lib/protocol/hash.ts";
import { writeFileDurably } from "../../server/witness/durable_file.ts";
import { KEY_FILE, loadOrCreateKey, WitnessKeyError } from "../../server/witness/key.ts";
import {
  type CosignedCheckpoint,
  openStateStore,
  StateLockedError,
} from "../../server/witness/state.ts";

const ORIGIN = "vote.example.org/witness-test";

function record(size: number, origin = ORIGIN): CosignedCheckpoint {
  return { origin, size, root: sha256(utf8(`root ${size}`)), note: `note ${size}\n` };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "ringvote-witness-state-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const recordFile = (dir: string, origin = ORIGIN) =>
  join(dir, "logs", `${bytesToHex(sha256(utf8(origin)))}.json`);

Deno.test("an update's record is written whole, one file per origin, before it resolves", async () => {
  await withDir(async (dir) => {
    const store = await openStateStore(dir);
    try {
      assert.equal(await store.latest(ORIGIN), null);
      const result = await store.update(ORIGIN, (latest) => ({
        result: latest,
        next: record(5),
      }));
      assert.equal(result, null, "decide saw no record");
      const json = JSON.parse(await Deno.readTextFile(recordFile(dir)));
      assert.deepEqual(json, {
        origin: ORIGIN,
        size: 5,
        root: bytesToBase64(record(5).root),
        note: "note 5\n",
      });
      assert.deepEqual(await store.latest(ORIGIN), record(5));
      assert.equal(await store.latest("other.example/log"), null);
      const names = [...Deno.readDirSync(join(dir, "logs"))].map((e) => e.name);
      assert.deepEqual(names, [`${bytesToHex(sha256(utf8(ORIGIN)))}.json`]);
    } finally {
      store.close();
    }
  });
});

Deno.test("updates of one origin run one at a time, each seeing the record the one before wrote", async () => {
  await withDir(async (dir) => {
    const store = await openStateStore(dir);
    try {
      const seen = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.update(ORIGIN, (latest) => {
            const size = latest?.size ?? 0;
            return { result: size, next: record(size + 1) };
          })),
      );
      assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => i));
      assert.equal((await store.latest(ORIGIN))?.size, 20);
    } finally {
      store.close();
    }
  });
});

Deno.test("a decide that throws writes nothing, and later updates still run", async () => {
  await withDir(async (dir) => {
    const store = await openStateStore(dir);
    try {
      await store.update(ORIGIN, () => ({ result: 0, next: record(3) }));
      await assert.rejects(
        store.update(ORIGIN, () => {
          throw new Error("boom");
        }),
        /boom/,
      );
      assert.equal((await store.latest(ORIGIN))?.size, 3);
      assert.equal(await store.update(ORIGIN, (l) => ({ result: l?.size })), 3);
      await assert.rejects(
        store.update(ORIGIN, () => ({ result: 0, next: record(4, "other.example/log") })),
        /names another log/,
      );
      assert.equal((await store.latest(ORIGIN))?.size, 3);
    } finally {
      store.close();
    }
  });
});

Deno.test("a second store on one directory is refused until the first is closed", async () => {
  await withDir(async (dir) => {
    const first = await openStateStore(dir);
    await assert.rejects(openStateStore(dir), StateLockedError);
    first.close();
    const second = await openStateStore(dir);
    second.close();
  });
});

Deno.test("opening removes the temporary files a killed writer left, and nothing else", async () => {
  await withDir(async (dir) => {
    (await openStateStore(dir)).close();
    const left = join(dir, "logs", ".abc.json.0123456789abcdef.tmp");
    const kept = join(dir, "logs", "notes.txt");
    await Deno.writeTextFile(left, '{"origin": "half');
    await Deno.writeTextFile(kept, "the operator's");
    (await openStateStore(dir)).close();
    await assert.rejects(Deno.stat(left), Deno.errors.NotFound);
    await Deno.stat(kept);
  });
});

Deno.test("a record that is not the origin's, or not a record, fails closed", async (t) => {
  await withDir(async (dir) => {
    const store = await openStateStore(dir);
    try {
      await store.update("a.example/log", () => ({ result: 0, next: record(7, "a.example/log") }));
      const cases = [
        {
          desc: "another origin's record",
          text: await Deno.readTextFile(recordFile(dir, "a.example/log")),
        },
        { desc: "not JSON", text: "{" },
        { desc: "no size", text: JSON.stringify({ ...recordJson(), size: -1 }) },
        { desc: "no root", text: JSON.stringify({ ...recordJson(), root: "AAAA" }) },
        { desc: "no note", text: JSON.stringify({ ...recordJson(), note: 5 }) },
      ];
      for (const { desc, text } of cases) {
        await t.step(desc, async () => {
          await Deno.writeTextFile(recordFile(dir), text);
          await assert.rejects(store.latest(ORIGIN), /is corrupt/);
          await assert.rejects(store.update(ORIGIN, () => ({ result: 0 })), /is corrupt/);
        });
      }
    } finally {
      store.close();
    }
  });

  function recordJson() {
    const { origin, size, root, note } = record(2);
    return { origin, size, root: bytesToBase64(root), note };
  }
});

Deno.test("writeFileDurably without replace keeps a file that exists", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "f");
    assert.equal(await writeFileDurably(path, utf8("one"), { replace: false }), true);
    assert.equal(await writeFileDurably(path, utf8("two"), { replace: false }), false);
    assert.equal(await Deno.readTextFile(path), "one");
    assert.equal(await writeFileDurably(path, utf8("three")), true);
    assert.equal(await Deno.readTextFile(path), "three");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["f"]);
  });
});

Deno.test("the witness key is made once and kept: base64 of the seed, mode 0600", async () => {
  await withDir(async (dir) => {
    const seed = new Uint8Array(32).fill(9);
    assert.deepEqual(await loadOrCreateKey(dir, () => seed), seed);
    const path = join(dir, KEY_FILE);
    assert.equal(await Deno.readTextFile(path), `${bytesToBase64(seed)}\n`);
    if (Deno.build.os !== "windows") assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const other = new Uint8Array(32).fill(10);
    assert.deepEqual(await loadOrCreateKey(dir, () => other), seed, "the kept key, not a new one");
  });
});

Deno.test("a key file others may read, or that holds no seed, is refused", async (t) => {
  await withDir(async (dir) => {
    const path = join(dir, KEY_FILE);
    const seed = new Uint8Array(32).fill(9);
    if (Deno.build.os !== "windows") {
      await t.step("mode 0644", async () => {
        await Deno.writeTextFile(path, `${bytesToBase64(seed)}\n`, { mode: 0o644 });
        await Deno.chmod(path, 0o644);
        const error = await loadOrCreateKey(dir).catch((e) => e);
        assert.ok(error instanceof WitnessKeyError);
        assert.match(error.message, /may be read by others \(mode 644\): chmod 600 it/);
        await Deno.remove(path);
      });
    }
    for (const text of ["", "not base64\n", `${bytesToBase64(new Uint8Array(31))}\n`, " x\n"]) {
      await t.step(`content ${JSON.stringify(text)}`, async () => {
        await Deno.writeTextFile(path, text, { mode: 0o600 });
        await Deno.chmod(path, 0o600);
        const error = await loadOrCreateKey(dir).catch((e) => e);
        assert.ok(error instanceof WitnessKeyError);
        assert.match(error.message, /does not hold the base64 of a 32-byte seed/);
        await Deno.remove(path);
      });
    }
  });
});
