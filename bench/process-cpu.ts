// CPU time of every process on this machine, by name: what each part of a bench costs the whole
// machine (the API server, etcd, the controllers, Knative, the functions), not only its own pods.
// From /proc: a process that exits between two readings takes its time with it (the pods' total
// in bench/cpu.ts counts those too).
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * Each live process's name and CPU seconds, by `pid@starttime`: a process keeps its key when its
 * name changes (a kernel worker's comm names the work it serves), and a reused pid gets a new one.
 */
export type ProcessCpu = Map<string, { name: string; seconds: number }>;

const TICKS = 100; // USER_HZ on Linux

/** A process's name: its executable's, or for node its script's, and the Knative Service it serves (K_SERVICE). */
function nameOf(proc: string, pid: string): string | undefined {
  try {
    const argv = readFileSync(`${proc}/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    if (argv.length === 0) return readFileSync(`${proc}/${pid}/comm`, "utf8").trim();
    const exe = basename(argv[0]!);
    if (exe !== "node") return exe;
    const script = argv.slice(1).find((a) => !a.startsWith("-"));
    const service = readFileSync(`${proc}/${pid}/environ`, "utf8")
      .split("\0")
      .find((e) => e.startsWith("K_SERVICE="))
      ?.slice("K_SERVICE=".length);
    return `node ${script ? basename(script) : ""}${service ? ` (${service})` : ""}`;
  } catch {
    return undefined; // gone meanwhile
  }
}

export function processCpu(proc = "/proc"): ProcessCpu {
  const out: ProcessCpu = new Map();
  for (const pid of readdirSync(proc)) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const stat = readFileSync(`${proc}/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = nameOf(proc, pid);
      if (name !== undefined)
        out.set(`${pid}@${fields[19]}`, { name, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds by process name (as last read) between two readings, most first (a process new since `before` counts whole). */
export function cpuByName(before: ProcessCpu, after: ProcessCpu): [string, number][] {
  const byName = new Map<string, number>();
  for (const [key, { name, seconds }] of after)
    byName.set(name, (byName.get(name) ?? 0) + seconds - (before.get(key)?.seconds ?? 0));
  return [...byName].filter(([, s]) => s >= 0.05).sort((a, b) => b[1] - a[1]);
}
