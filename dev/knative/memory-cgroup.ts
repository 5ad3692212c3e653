/**
 * A process under a container's memory limit, as the kubelet runs it: in a memory cgroup of its
 * own, under this process's cgroup (the v1 memory controller, or cgroup v2). Node sizes V8's heap
 * from that limit (`process.constrainedMemory()`: under 256Mi its heap limit is 259 MiB, where a
 * host of 24 GiB gives 4 GiB), so a function's memory behaves here as in a pod, and a process over
 * its limit is killed as the kernel kills a container's (`OOMKilled`). Where this user may not
 * create a cgroup, the caller is told why and runs the process unlimited.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { quantityValue } from "../../shared/quantity.ts";

export interface MemoryCgroup {
  /** How the limit is applied, for logs and reports. */
  how: string;
  /** The command and arguments that run `argv` inside the cgroup, as the same process. */
  wrap(argv: readonly string[]): { command: string; args: string[] };
  /** How many processes the kernel killed in it for going over the limit. */
  oomKills(): number;
  /** Removes the cgroup once its processes have exited; false if it could not. */
  remove(): boolean;
}

const PREFIX = "dynamo-pool-relay-";
let made = 0;

/** A container's memory limit in bytes (`resources.limits.memory`), if it has one. */
export function memoryLimitBytes(container: { resources?: { limits?: { memory?: string | number; [other: string]: unknown } } }): number | undefined {
  const limit = container.resources?.limits?.memory;
  const value = limit === undefined ? undefined : quantityValue(limit);
  if (limit !== undefined && !value) throw new Error(`the memory limit ${JSON.stringify(limit)} is not a quantity`);
  return value && Number(value.num / value.den);
}

/**
 * A memory cgroup limited to `bytes`, or why there is none.
 *
 * @param membership this process's /proc/self/cgroup
 * @param root where the cgroup hierarchies are mounted
 */
export function memoryCgroup(bytes: number, membership = readFileSync("/proc/self/cgroup", "utf8"), root = "/sys/fs/cgroup"): MemoryCgroup | { why: string } {
  const lines = membership.split("\n").map((l) => l.split(":"));
  const v1 = lines.find(([, controllers]) => controllers?.split(",").includes("memory"));
  const v2 = lines.find(([id]) => id === "0");
  const [parent, limitFile, eventsFile, version] = v1
    ? [join(root, "memory", v1[2] ?? ""), "memory.limit_in_bytes", "memory.oom_control", "v1"]
    : [join(root, v2?.[2] ?? ""), "memory.max", "memory.events", "v2"];
  removeAbandoned(parent);
  const dir = join(parent, `${PREFIX}${process.pid}-${made++}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return { why: `no memory cgroup can be made here (${(err as Error).message})` };
  }
  try {
    writeFileSync(join(dir, limitFile), String(bytes));
  } catch (err) {
    rmdirSync(dir);
    return { why: `a cgroup ${version} here takes no memory limit (${(err as Error).message})` };
  }
  return {
    how: `a memory cgroup (${version}) of ${(bytes / 2 ** 20).toFixed(0)} MiB`,
    // The shell puts itself in the cgroup and becomes the command: one process, one pid.
    wrap: (argv) => ({ command: "/bin/sh", args: ["-c", 'echo $$ > "$0" && exec "$@"', join(dir, "cgroup.procs"), ...argv] }),
    oomKills: () => {
      try {
        return Number(/^oom_kill (\d+)/m.exec(readFileSync(join(dir, eventsFile), "utf8"))?.[1] ?? 0);
      } catch {
        return 0;
      }
    },
    remove: () => {
      try {
        rmdirSync(dir);
        return true;
      } catch {
        return !existsSync(dir);
      }
    },
  };
}

/** The empty cgroups left by a process that was killed before it removed them. */
function removeAbandoned(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) {
    const creator = /^dynamo-pool-relay-(\d+)-\d+$/.exec(entry)?.[1];
    if (creator === undefined || alive(Number(creator))) continue;
    try {
      rmdirSync(join(parent, entry));
    } catch {
      // Still holds a process (or is not a cgroup): left alone.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
