// The layering the README's layout table promises, checked on the files themselves: the protocol
// layer (lib/protocol/) never imports the client layer (lib/client/), whose feature folders import
// only the protocol, the shared files at its top and their own folder; nothing under lib/ reaches
// Deno's APIs, Deno KV or Hono, so the same code runs in the browser, nor keeps UI state or runs
// timers; no module imports itself through others, not even for a type; no source file runs past
// 400 lines; and the repository stands alone, citing only its own docs/ and never a document kept
// outside it.
import assert from "node:assert/strict";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Generated or runtime output, not part of the repository's own text. */
const SKIPPED_DIRS = new Set([".git", "static/build", "data", "tests/artifacts", "node_modules"]);
const SOURCE_EXTENSIONS = new Set([".ts", ".tsx", ".js", ".mjs"]);

/**
 * Texts that point outside the repository: the sibling folder and the names of the contract
 * documents kept there. Assembled from parts so that this file does not contain them itself.
 */
const OUTSIDE_REFERENCES = [
  ["..", "shared"].join("/"),
  ["DESIGN", "md"].join("."),
  ["SPEC", "md"].join("."),
  ["DESIGN", "§"].join(" "),
  ["SPEC", "§"].join(" "),
];

/** Every file under `dir` (repository-relative paths, forward slashes), skipping output folders. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, dir))) {
    const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      if (!SKIPPED_DIRS.has(path)) out.push(...filesUnder(path));
    } else if (entry.isFile) {
      out.push(path);
    }
  }
  return out.sort();
}

function sourcesUnder(dir: string): string[] {
  return filesUnder(dir).filter((path) => SOURCE_EXTENSIONS.has(extname(path)));
}

function read(path: string): string {
  return new TextDecoder().decode(Deno.readFileSync(join(ROOT, path)));
}

/** The module specifiers of every static import or re-export, and of every dynamic import. */
function importSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  const staticForm = /\b(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/g;
  const dynamicForm = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const match of source.matchAll(staticForm)) specifiers.push(match[1]);
  for (const match of source.matchAll(dynamicForm)) specifiers.push(match[1]);
  return specifiers;
}

/** `source` without its comments, so that a comment naming an API is not taken for a use. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/[^\n]*/g, "$1");
}

/** True when the code (comments aside) touches the `Deno` global. */
function usesDenoGlobal(source: string): boolean {
  return /\bDeno\s*[.[]/.test(withoutComments(source));
}

/** True when `specifier` names Hono or a Deno KV client package. */
function isServerOnlyPackage(specifier: string): boolean {
  return /^(?:npm:\/?)?hono(?:[@/]|$)/.test(specifier) ||
    /^(?:npm:\/?)?@deno\/kv\b/.test(specifier);
}

/** True when `specifier` names Preact or its signals: UI state, which lives with the islands. */
function isUiPackage(specifier: string): boolean {
  return /^(?:npm:\/?)?(?:@preact\/signals|preact|react)(?:[@/]|$)/.test(specifier);
}

/** The repository-relative path `specifier` names from `file`, or null for a package. */
function resolveRelative(file: string, specifier: string): string | null {
  if (!specifier.startsWith(".")) return null;
  return relative(ROOT, resolve(ROOT, dirname(file), specifier)).replaceAll("\\", "/");
}

/**
 * The first import circle among `files`, as the files along it with the first repeated at the
 * end, or null when there is none. A depth-first walk; imports outside `files` are not followed.
 */
function findImportCircle(
  files: string[],
  importsOf: (file: string) => string[],
): string[] | null {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  function visit(file: string): string[] | null {
    if (state.get(file) === "done") return null;
    if (state.get(file) === "open") return [...path.slice(path.indexOf(file)), file];
    state.set(file, "open");
    path.push(file);
    for (const next of importsOf(file)) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    state.set(file, "done");
    return null;
  }
  for (const file of files) {
    const circle = visit(file);
    if (circle) return circle;
  }
  return null;
}

Deno.test("the layout checks recognise what they look for", () => {
  const sample = `import { a } from "../client/voter/status.ts";
import type {
  B,
} from "./chain.ts";
export { c } from "hono/http-exception";
import "npm:hono@4";
const d = await import("../client/voter/voters.ts");
// import { e } from "./commented.ts" is still listed: the check errs on the strict side.`;
  assert.deepEqual(importSpecifiers(sample), [
    "../client/voter/status.ts",
    "./chain.ts",
    "hono/http-exception",
    "npm:hono@4",
    "./commented.ts",
    "../client/voter/voters.ts",
  ]);
  assert.equal(
    resolveRelative("lib/protocol/x.ts", "../client/voter/status.ts"),
    "lib/client/voter/status.ts",
  );
  assert.equal(usesDenoGlobal("const kv = await Deno.openKv();"), true);
  assert.equal(usesDenoGlobal("type K = Deno.KvKey;"), true);
  assert.equal(usesDenoGlobal('const env = Deno["env"];'), true);
  assert.equal(usesDenoGlobal("// never Deno.openKv here\n/* nor Deno.env */ const x = 1;"), false);
  assert.equal(isServerOnlyPackage("hono"), true);
  assert.equal(isServerOnlyPackage("npm:hono@4.13.19"), true);
  assert.equal(isServerOnlyPackage("@deno/kv"), true);
  assert.equal(isServerOnlyPackage("honorific"), false);
  assert.equal(isServerOnlyPackage("@noble/curves/ed25519.js"), false);
  assert.equal(isUiPackage("@preact/signals"), true);
  assert.equal(isUiPackage("preact/hooks"), true);
  assert.equal(isUiPackage("react"), true);
  assert.equal(isUiPackage("preact-render-to-string"), false);
  const graph: Record<string, string[]> = { a: ["b"], b: ["c", "d"], c: [], d: ["b"] };
  assert.deepEqual(findImportCircle(Object.keys(graph), (f) => graph[f]), ["b", "d", "b"]);
  assert.equal(
    findImportCircle(["a", "b", "c"], (f) => ({ a: ["b", "c"], b: ["c"] })[f] ?? []),
    null,
  );
});

Deno.test("no module under lib/protocol imports lib/client", () => {
  const files = sourcesUnder("lib/protocol");
  assert.ok(files.length > 0, "lib/protocol holds modules");
  const offending = files.flatMap((file) =>
    importSpecifiers(read(file))
      .filter((specifier) => resolveRelative(file, specifier)?.startsWith("lib/client/"))
      .map((specifier) => `${file} imports ${specifier}`)
  );
  assert.deepEqual(offending, []);
});

/**
 * Feature folders of lib/client/ that may import another's, and which: the lab's voters are the
 * voting page's voters on a practice ledger, so the lab drives voter/'s actions and checks.
 */
const FEATURE_IMPORTS: Record<string, string[]> = { lab: ["voter", "log"] };

/** Why `file` (under lib/client/) may not import `target`, or null when it may. */
function clientImportProblem(file: string, target: string): string | null {
  if (!target.startsWith("lib/")) return `reaches ${target} outside lib/`;
  if (target.startsWith("lib/protocol/")) return null;
  const [, , fromFolder] = file.split("/");
  const [, , toFolder, rest] = target.split("/");
  const fromShared = file.split("/").length === 3;
  const toShared = target.split("/").length === 3;
  if (toShared) return null;
  if (fromShared) return `a shared file imports the feature folder ${toFolder}/`;
  if (toFolder === fromFolder || FEATURE_IMPORTS[fromFolder]?.includes(toFolder)) return null;
  return rest === undefined ? `imports ${target}` : `imports the feature folder ${toFolder}/`;
}

Deno.test("lib/client holds at most four shared files at its top, and feature folders", () => {
  const top = [...Deno.readDirSync(join(ROOT, "lib/client"))];
  const files = top.filter((entry) => entry.isFile).map((entry) => entry.name).sort();
  assert.ok(files.length <= 4, `shared files: ${files.join(", ")}`);
  assert.ok(top.some((entry) => entry.isDirectory), "lib/client holds feature folders");
});

Deno.test("a feature folder under lib/client imports only lib/protocol, the shared files and its own folder", () => {
  const files = sourcesUnder("lib/client");
  assert.ok(files.some((file) => file.split("/").length > 3), "lib/client holds feature folders");
  const offending = files.flatMap((file) =>
    importSpecifiers(read(file)).flatMap((specifier) => {
      const target = resolveRelative(file, specifier);
      const problem = target === null ? null : clientImportProblem(file, target);
      return problem === null ? [] : [`${file} ${problem} (${specifier})`];
    })
  );
  assert.deepEqual(offending, []);
  assert.equal(
    clientImportProblem("lib/client/board/a.ts", "lib/client/voter/b.ts"),
    "imports the feature folder voter/",
  );
  assert.equal(
    clientImportProblem("lib/client/heads.ts", "lib/client/voter/b.ts"),
    "a shared file imports the feature folder voter/",
  );
  assert.equal(clientImportProblem("lib/client/lab/a.ts", "lib/client/voter/b.ts"), null);
  assert.equal(
    clientImportProblem("lib/client/voter/a.ts", "lib/client/lab/b.ts"),
    "imports the feature folder lab/",
  );
  assert.equal(clientImportProblem("lib/client/audit/a.ts", "lib/client/text.ts"), null);
});

Deno.test("nothing under lib/ uses Deno's APIs, Deno KV or Hono", () => {
  const files = sourcesUnder("lib");
  assert.ok(files.length > 0, "lib holds modules");
  const offending: string[] = [];
  for (const file of files) {
    const source = read(file);
    if (usesDenoGlobal(source)) offending.push(`${file} uses the Deno global`);
    for (const specifier of importSpecifiers(source)) {
      if (isServerOnlyPackage(specifier)) offending.push(`${file} imports ${specifier}`);
    }
  }
  assert.deepEqual(offending, []);
});

Deno.test("nothing under lib/ keeps UI state or runs a timer", () => {
  const offending: string[] = [];
  for (const file of sourcesUnder("lib")) {
    const source = read(file);
    if (/\bsetInterval\s*\(/.test(withoutComments(source))) offending.push(`${file} runs a timer`);
    for (const specifier of importSpecifiers(source)) {
      if (isUiPackage(specifier)) offending.push(`${file} imports ${specifier}`);
    }
  }
  assert.deepEqual(offending, []);
});

Deno.test("no import circle among the repository's modules, type-only imports included", () => {
  const files = filesUnder("").filter((path) => SOURCE_EXTENSIONS.has(extname(path)));
  assert.ok(files.includes("server/verifier/mod.ts"), "server/ holds modules");
  assert.ok(files.includes("islands/board/state.ts"), "islands/ holds modules");
  const within = new Set(files);
  const importsOf = (file: string) =>
    importSpecifiers(read(file))
      .map((specifier) => resolveRelative(file, specifier))
      .filter((path): path is string => path !== null && within.has(path));
  assert.deepEqual(findImportCircle(files, importsOf), null);
});

/** Most lines a source file may hold: a longer one does more than one job. */
const MAX_SOURCE_LINES = 400;

Deno.test(`no source file outside tests/ runs past ${MAX_SOURCE_LINES} lines`, () => {
  const files = filesUnder("").filter((path) =>
    SOURCE_EXTENSIONS.has(extname(path)) && !path.startsWith("tests/")
  );
  const long = files.flatMap((file) => {
    const text = read(file);
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    return lines > MAX_SOURCE_LINES ? [`${file}: ${lines} lines`] : [];
  });
  assert.deepEqual(long, []);
});

Deno.test("no file cites a document kept outside the repository", () => {
  const files = filesUnder("");
  assert.ok(files.includes("docs/protocol.md") && files.includes("docs/page.md"));
  const offending = files.flatMap((file) => {
    const text = read(file);
    return OUTSIDE_REFERENCES.filter((needle) => text.includes(needle)).map((needle) =>
      `${file} mentions ${needle}`
    );
  });
  assert.deepEqual(offending, []);
});
