// The processes a bench started, read from /proc (Linux): which are below it, and the private
// memory of Chromium's renderer among them.

/** Every live process below `root`, leaving out the tree of `except` (the server, say). */
export function descendants(root: number, except: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while listed.
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined; p = parent.get(p)) {
      if (p === except) return false;
      if (p === root) return true;
    }
    return false;
  };
  return [...parent.keys()].filter((pid) => pid !== except && below(pid));
}

/**
 * The private memory (RssAnon: the heaps, not the shared code) of the largest Chromium renderer
 * process (`--type=renderer`) below this one, in MB: the page's, which runs the page and its
 * workers. `except`'s tree (the server) is left out.
 */
export function rendererMb(except: number): number {
  return Math.max(
    0,
    ...descendants(Deno.pid, except).map((pid) => {
      try {
        if (!Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes("--type=renderer")) return 0;
        const status = Deno.readTextFileSync(`/proc/${pid}/status`);
        return Number(/RssAnon:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    }),
  );
}

/** Clock ticks a second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user and system) of every Chromium renderer process (`--type=renderer`) below this
 * one so far; `except`'s tree (the server) is left out.
 */
export function rendererCpuSeconds(except: number): number {
  let ticks = 0;
  for (const pid of descendants(Deno.pid, except)) {
    try {
      if (!Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes("--type=renderer")) continue;
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    } catch {
      // The process ended while listed.
    }
  }
  return ticks / TICKS_PER_SECOND;
}
