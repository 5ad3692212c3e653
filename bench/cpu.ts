// CPU time of what a bench compares, from the kernel's accounting: every pod on the real node
// (cgroup v1 cpuacct of the kubelet's `kubepods`, so pods that come and go are all counted), and
// one process by its /proc stat.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const CPUACCT = "/sys/fs/cgroup/cpuacct";

/** CPU seconds used so far by every pod of the real nodes on this machine (kwok's pods have no process). */
export function podsCpuSeconds(root = CPUACCT): number {
  const nodes = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, "kubepods", "cpuacct.usage"))) : [];
  return nodes.reduce((s, n) => s + Number(readFileSync(join(root, n, "kubepods", "cpuacct.usage"), "utf8")) / 1e9, 0);
}

/** CPU seconds (user + system) a live process has used; its children that ended are in cutime/cstime, not counted. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command may hold spaces and parentheses: the fields start after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100; // USER_HZ is 100 on Linux
}
