// The Go programs the interoperability tests run against the project (tests/go/): whether Go and
// the Debian package a program needs are here, and the program built in GOPATH mode (the Go module
// proxy is not reachable), with the Debian Go packages on the GOPATH.
import assert from "node:assert/strict";

/**
 * Why a Go program needing `source` (a folder of a Debian Go package, installed by `apt`) cannot
 * be built here, or null when it can.
 */
export async function goMissing(source: string, apt: string): Promise<string | null> {
  try {
    const { success } = await new Deno.Command("go", { args: ["version"], stdout: "null" })
      .output();
    if (!success) return "`go version` failed";
  } catch {
    return "go is not installed (apt-get install golang-go)";
  }
  try {
    await Deno.stat(source);
  } catch {
    return `${source} is missing (apt-get install ${apt})`;
  }
  return null;
}

/** Builds the Go program in `program` into `dir`/`name` (its own GOPATH and cache there). */
export async function buildGoProgram(program: URL, dir: string, name: string): Promise<string> {
  const binary = `${dir}/${name}`;
  const { success, stderr } = await new Deno.Command("go", {
    args: ["build", "-o", binary, "."],
    cwd: program.pathname,
    env: {
      GO111MODULE: "off",
      GOPATH: `${dir}/gopath:/usr/share/gocode`,
      GOCACHE: `${dir}/gocache`,
      GOFLAGS: "",
      PATH: Deno.env.get("PATH") ?? "",
      HOME: dir,
    },
  }).output();
  assert.ok(success, `go build failed:\n${new TextDecoder().decode(stderr)}`);
  return binary;
}
