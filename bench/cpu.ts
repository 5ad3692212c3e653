// CPU time of every pod on the real node, from the kernel's accounting (cgroup v1 cpuacct of the
// kubelet's `kubepods`, so pods that come and go are all counted). A process's own: procCpuSeconds
// in bench/classic.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const CPUACCT = "/sys/fs/cgroup/cpuacct";

/** CPU seconds used so far by every pod of the real nodes on this machine (kwok's pods have no process). */
export function podsCpuSeconds(root = CPUACCT): number {
  const nodes = existsSync(root)
    ? readdirSync(root).filter((d) => existsSync(join(root, d, "kubepods", "cpuacct.usage")))
    : [];
  return nodes.reduce((s, n) => s + Number(readFileSync(join(root, n, "kubepods", "cpuacct.usage"), "utf8")) / 1e9, 0);
}
