// Builds the page's islands for the browser: one hydration module per file in islands/ and one
// module worker per file in islands/workers/, bundled with `deno bundle` (minified, code-split so
// that faker stays a chunk loaded on demand; each island on its own, as a page hydrates one, and
// the workers together), written to static/build/ under content-hashed names,
// with the stylesheet and the manifest the server render reads. `--if-needed` skips the work when
// the manifest was built from the same sources.
import { bytesToHex, concatBytes } from "../lib/protocol/bytes.ts";
import type { AssetManifest } from "../server/pages/render.tsx";

/** Options of {@link build}. */
export type BuildOptions = {
  /** Project root; default the parent of scripts/. */
  root?: URL;
  /** Output directory; default static/build/ under the root. */
  outDir?: URL;
  /** URL prefix the files are served under. */
  baseUrl?: string;
  /** Skip the build when the manifest's fingerprint matches the sources. */
  ifNeeded?: boolean;
};

/** One output file and its size, raw and gzipped. */
export type BuiltFile = { name: string; bytes: number; gzipBytes: number };

/** What a build produced (or found up to date). */
export type BuildResult = { manifest: AssetManifest; built: boolean; files: BuiltFile[] };

const ROOT = new URL("../", import.meta.url);
/** Sources whose change requires a new build: these folders, subfolders included, and files. */
const INPUT_DIRS = ["islands/", "components/", "lib/", "static/"];
const INPUT_FILES = ["scripts/build.ts", "deno.json"];

/** Builds the islands (see the module comment); answers the manifest and the files. */
export async function build(options: BuildOptions = {}): Promise<BuildResult> {
  const root = options.root ?? ROOT;
  const outDir = options.outDir ?? new URL("static/build/", root);
  const baseUrl = options.baseUrl ?? "/static/build/";
  const islands = await islandNames(root);
  const workers = (await filesIn(new URL("islands/workers/", root), ".ts")).map((f) =>
    f.slice(0, -3)
  );
  const fingerprint = await sourceFingerprint(root);

  if (options.ifNeeded) {
    const current = await readManifest(outDir);
    if (current?.fingerprint === fingerprint && await allPresent(current, { outDir, baseUrl })) {
      return {
        manifest: current,
        built: false,
        files: await sizesOf(current, { outDir, baseUrl }),
      };
    }
  }

  const work = await Deno.makeTempDir({ prefix: "ringvote-build-" });
  try {
    for (const name of islands) {
      const entry = `${work}/${name}.ts`;
      await Deno.writeTextFile(
        entry,
        [
          `import { hydrateIslands } from ${
            JSON.stringify(new URL("islands/runtime.ts", root).href)
          };`,
          `import Island from ${JSON.stringify(new URL(`islands/${name}.tsx`, root).href)};`,
          `hydrateIslands(${JSON.stringify(name)}, Island);`,
          "",
        ].join("\n"),
      );
    }
    for (const name of workers) {
      const entry = `${work}/${WORKER_PREFIX}${name}.ts`;
      await Deno.writeTextFile(
        entry,
        `import ${JSON.stringify(new URL(`islands/workers/${name}.ts`, root).href)};\n`,
      );
    }
    // Each page hydrates one island, so each island is bundled on its own, split only into the
    // chunks it loads on demand: its first load is then a few files, not every chunk it shares
    // with the other pages. The workers are bundled together.
    const groups = [
      ...islands.map((name) => [`${work}/${name}.ts`]),
      workers.map((name) => `${work}/${WORKER_PREFIX}${name}.ts`),
    ].filter((group) => group.length > 0);
    const outputs = new Map<string, Uint8Array>();
    const entryFiles: Record<string, string> = {};
    const entryNames = [...islands, ...workers.map((name) => WORKER_PREFIX + name)];
    for (const [index, group] of groups.entries()) {
      const bundled = `${work}/out-${index}`;
      const { success, stderr } = await new Deno.Command(Deno.execPath(), {
        args: [
          "bundle",
          "--platform=browser",
          "--format=esm",
          "--minify",
          "--code-splitting",
          `--config=${new URL("deno.json", root).pathname}`,
          `--outdir=${bundled}`,
          ...group,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!success) throw new Error(`deno bundle failed:\n${new TextDecoder().decode(stderr)}`);

      // Chunks are named by esbuild with a hash of their content; entries get one here.
      for await (const item of Deno.readDir(bundled)) {
        if (!item.isFile || !item.name.endsWith(".js")) continue;
        const content = await Deno.readFile(`${bundled}/${item.name}`);
        const entry = entryNames.find((name) => `${name}.js` === item.name);
        const name = entry ? `${entry}-${await contentHash(content)}.js` : item.name;
        if (entry) entryFiles[entry] = name;
        const earlier = outputs.get(name);
        if (earlier && !sameBytes(earlier, content)) {
          throw new Error(`two bundles wrote different files named ${name}`);
        }
        outputs.set(name, content);
      }
    }
    const styles: string[] = [];
    for (const css of await filesIn(new URL("static/", root), ".css")) {
      const content = await Deno.readFile(new URL(`static/${css}`, root));
      const name = `${css.slice(0, -4)}-${await contentHash(content)}.css`;
      outputs.set(name, content);
      styles.push(baseUrl + name);
    }

    const decoder = new TextDecoder();
    const manifest: AssetManifest = { fingerprint, islands: {}, preload: {}, styles, workers: {} };
    for (const worker of workers) {
      const file = entryFiles[WORKER_PREFIX + worker];
      if (!file) throw new Error(`deno bundle wrote no module for worker ${worker}`);
      manifest.workers[worker] = baseUrl + file;
    }
    for (const island of islands) {
      const file = entryFiles[island];
      if (!file) throw new Error(`deno bundle wrote no module for island ${island}`);
      manifest.islands[island] = baseUrl + file;
      manifest.preload[island] = staticImports(decoder.decode(outputs.get(file)))
        .map((chunk) => baseUrl + chunk);
    }

    await Deno.mkdir(outDir, { recursive: true });
    for (const [name, content] of outputs) await writeAtomically(new URL(name, outDir), content);
    await writeAtomically(
      new URL("manifest.json", outDir),
      new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n"),
    );
    await pruneStale(outDir, new Set([...outputs.keys(), "manifest.json"]));
    return { manifest, built: true, files: await sizesOf(manifest, { outDir, baseUrl }) };
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

/** True when `a` and `b` hold the same bytes. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Prefix of a worker's bundle name, so a worker never shares a file name with an island. */
const WORKER_PREFIX = "worker-";

/** Island names: the files of islands/, without extension. */
async function islandNames(root: URL): Promise<string[]> {
  const names = (await filesIn(new URL("islands/", root), ".tsx")).map((f) => f.slice(0, -4));
  if (names.length === 0) throw new Error("islands/ holds no .tsx file");
  return names;
}

/** Sorted names of the files in `dir` ending with `suffix`; none when `dir` does not exist. */
async function filesIn(dir: URL, suffix: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const item of Deno.readDir(dir)) {
      if (item.isFile && item.name.endsWith(suffix)) names.push(item.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

/** Paths of the files under `dir` and its subdirectories, except the build's own output. */
async function filesUnder(root: URL, dir: string): Promise<string[]> {
  const paths: string[] = [];
  for await (const item of Deno.readDir(new URL(dir, root))) {
    const path = dir + item.name;
    if (item.isFile) paths.push(path);
    else if (item.isDirectory && `${path}/` !== "static/build/") {
      paths.push(...await filesUnder(root, `${path}/`));
    }
  }
  return paths;
}

/** SHA-256 over the path and content of every build input, in path order. */
async function sourceFingerprint(root: URL): Promise<string> {
  const paths = [...INPUT_FILES];
  for (const dir of INPUT_DIRS) paths.push(...await filesUnder(root, dir));
  paths.sort();
  const parts: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for (const path of paths) {
    parts.push(encoder.encode(`${path}\0`), await Deno.readFile(new URL(path, root)));
  }
  const all = concatBytes(...parts) as Uint8Array<ArrayBuffer>;
  return bytesToHex(new Uint8Array(await crypto.subtle.digest("SHA-256", all)));
}

/** First 12 hex digits of the SHA-256 of `content`: the file name's content hash. */
async function contentHash(content: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", content as Uint8Array<ArrayBuffer>);
  return bytesToHex(new Uint8Array(digest)).slice(0, 12);
}

/** Files a bundled module imports statically (`import … from "./x.js"`), not `import("./x.js")`. */
export function staticImports(code: string): string[] {
  const found = new Set<string>();
  for (const match of code.matchAll(/(?:\bfrom|\bimport)\s*["']\.\/([^"']+\.js)["']/g)) {
    found.add(match[1]);
  }
  return [...found];
}

async function readManifest(outDir: URL): Promise<AssetManifest | null> {
  try {
    return JSON.parse(await Deno.readTextFile(new URL("manifest.json", outDir)));
  } catch {
    return null;
  }
}

function manifestFiles(manifest: AssetManifest, baseUrl: string): string[] {
  const urls = [
    ...Object.values(manifest.islands),
    ...Object.values(manifest.workers ?? {}),
    ...Object.values(manifest.preload).flat(),
    ...manifest.styles,
  ];
  return [...new Set(urls.map((url) => url.slice(baseUrl.length)))];
}

/** Where the built files live and the URL prefix they are served under. */
type Place = { outDir: URL; baseUrl: string };

async function allPresent(manifest: AssetManifest, { outDir, baseUrl }: Place) {
  for (const name of manifestFiles(manifest, baseUrl)) {
    try {
      await Deno.stat(new URL(name, outDir));
    } catch {
      return false;
    }
  }
  return true;
}

/** Sizes of the files the page loads on first paint (islands, their chunks, stylesheets). */
async function sizesOf(manifest: AssetManifest, { outDir, baseUrl }: Place) {
  const files: BuiltFile[] = [];
  for (const name of manifestFiles(manifest, baseUrl)) {
    const content = await Deno.readFile(new URL(name, outDir));
    files.push({ name, bytes: content.length, gzipBytes: await gzipSize(content) });
  }
  return files;
}

/** Size of `content` gzipped. */
export async function gzipSize(content: Uint8Array): Promise<number> {
  const stream = new Blob([content as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new CompressionStream("gzip"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
async function writeAtomically(target: URL, content: Uint8Array): Promise<void> {
  const temp = new URL(`${target.pathname.split("/").pop()}.${crypto.randomUUID()}.tmp`, target);
  await Deno.writeFile(temp, content);
  await Deno.rename(temp, target);
}

/** Removes earlier builds' files; hashed names make a kept file's content certain. */
async function pruneStale(outDir: URL, keep: Set<string>): Promise<void> {
  for await (const item of Deno.readDir(outDir)) {
    if (item.isFile && !keep.has(item.name) && !item.name.endsWith(".tmp")) {
      await Deno.remove(new URL(item.name, outDir)).catch(() => {});
    }
  }
}

if (import.meta.main) {
  const ifNeeded = Deno.args.includes("--if-needed");
  const started = performance.now();
  const { manifest, built, files } = await build({ ifNeeded });
  const ms = Math.round(performance.now() - started);
  console.log(built ? `Built the islands in ${ms} ms:` : "Island bundles are up to date:");
  for (const f of files) console.log(`  ${f.name}  ${f.bytes} B, ${f.gzipBytes} B gzipped`);
  // Each page hydrates one island: its first load is that island's module and its preloads.
  const gzipOf = new Map(files.map((f) => [f.name, f.gzipBytes]));
  const base = (url: string) => url.slice(url.lastIndexOf("/") + 1);
  for (const [island, url] of Object.entries(manifest.islands)) {
    const names = [url, ...(manifest.preload[island] ?? [])].map(base);
    const gz = names.reduce((n, name) => n + (gzipOf.get(name) ?? 0), 0);
    console.log(`First-load JavaScript of ${island}: ${gz} B gzipped in ${names.length} files`);
  }
}
