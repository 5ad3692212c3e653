// The memory of the whole local stack: every process descended from the control plane's
// components. The node's processes are all the node process's descendants (in its PID namespace an
// orphan goes to init.sh, PID 1 there), pods' included; a container's processes are named by their
// pod and container, every other process by its program.
import { readdirSync, readFileSync } from "node:fs";
import type { KubeClient } from "../shared/kube/client.ts";
import { procStatusMiB } from "./pipeline-support.ts";

interface Pod {
  metadata: {
    namespace: string;
    name: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string }[];
  };
  status?: { containerStatuses?: { name: string; containerID?: string }[] };
}

/** A Deployment's pods by its name (their ReplicaSet's, less the template hash), so that they share one; any other pod by its own. */
function owner(p: Pod): string {
  const rs = p.metadata.ownerReferences?.find((o) => o.kind === "ReplicaSet")?.name;
  const hash = p.metadata.labels?.["pod-template-hash"];
  return rs && hash && rs.endsWith(`-${hash}`) ? rs.slice(0, -hash.length - 1) : p.metadata.name;
}

/** RSS in MB by program, over the processes descended from `roots`. */
export async function stackMemory(admin: KubeClient, roots: readonly number[]): Promise<Map<string, number>> {
  const containers = new Map<string, string>();
  for (const p of await admin.list<Pod>("v1", "Pod", undefined)) {
    for (const c of p.status?.containerStatuses ?? []) {
      if (c.containerID)
        containers.set(c.containerID.replace(/^\w+:\/\//, ""), `${p.metadata.namespace}/${owner(p)} ${c.name}`);
    }
  }
  const parent = new Map<number, number>();
  for (const pid of readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .map(Number)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const inStack = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p))
      if (roots.includes(p)) return true;
    return false;
  };
  const byName = new Map<string, number>();
  for (const pid of [...parent.keys()].filter(inStack)) {
    try {
      const cgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8");
      const container = [...containers].find(([id]) => cgroup.includes(id))?.[1];
      const name =
        container ??
        readFileSync(`/proc/${pid}/cmdline`, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((a) => a.split("/").pop())
          .slice(0, 2)
          .join(" ")
          .slice(0, 60);
      byName.set(name, (byName.get(name) ?? 0) + (procStatusMiB(pid, "VmRSS") ?? 0));
    } catch {
      // Gone meanwhile.
    }
  }
  return byName;
}
