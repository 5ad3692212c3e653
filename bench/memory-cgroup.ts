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
import { quantityValue } from "../shared/quantity.ts";

export interface MemoryCgroup {
  /** How the limit is applied, for logs and reports. */
  how: string;
  /** The command and arguments that run `argv` inside the cgroup, as the same process. */
  wrap(argv: readonly string[]): { command: string; args: string[] };
  /** Removes the cgroup once its processes have exited; false if it could not. */
  remove(): boolean;
}

const PREFIX = "dynamo-pool-relay-";
/** `<PREFIX><creator's pid>-<count>`. */
const ABANDONED = new RegExp(`^${PREFIX}(\\d+)-\\d+$`);
let made = 0;

/**
 * A container's memory limit in whole bytes (`resources.limits.memory`, a fraction rounded up as the
 * kubelet does), if it has one; none for a limit of 0, which Kubernetes reads as no limit.
 */
export function memoryLimitBytes(container: {
  resources?: { limits?: { memory?: string | number; [other: string]: unknown } };
}): number | undefined {
  const limit = container.resources?.limits?.memory;
  const value = limit === undefined ? undefined : quantityValue(limit);
  if (limit !== undefined && !value) throw new Error(`the memory limit ${JSON.stringify(limit)} is not a quantity`);
  if (!value || value.num <= 0n) return undefined;
  return Number((value.num + value.den - 1n) / value.den);
}

/**
 * A memory cgroup limited to `bytes`, swap included, or why there is none. On cgroup v2 only where
 * the memory controller is enabled for this process's cgroup's children, which the kernel allows
 * only when that cgroup holds no process itself (a delegated scope whose processes sit in a leaf).
 *
 * @param membership this process's /proc/self/cgroup (null on a system without one)
 * @param root where the cgroup hierarchies are mounted
 */
export function memoryCgroup(
  bytes: number,
  membership: string | null = ownCgroups(),
  root = "/sys/fs/cgroup",
): MemoryCgroup | { why: string } {
  if (membership === null) return { why: "this system has no /proc/self/cgroup" };
  const { v1, v2 } = memoryCgroupLines(membership);
  const [parent, limitFile, swapFile, version] = v1
    ? [join(root, "memory", v1.path), "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "v1"]
    : [join(root, v2?.path ?? ""), "memory.max", "memory.swap.max", "v2"];
  // A folder that is not a cgroup (a tmpfs where no hierarchy is mounted) would take any file.
  if (!existsSync(join(parent, "cgroup.procs"))) return { why: `${parent} is not a cgroup` };
  if (version === "v2" && !controllersOfChildren(parent).includes("memory")) {
    return { why: `the memory controller is not enabled for the children of ${parent} (cgroup v2)` };
  }
  removeAbandoned(parent);
  const dir = join(parent, `${PREFIX}${process.pid}-${made++}`);
  try {
    mkdirSync(dir);
  } catch (err) {
    return { why: `no memory cgroup can be made here (${(err as Error).message})` };
  }
  try {
    writeFileSync(join(dir, limitFile), String(bytes));
    // A limit the process could swap past would not end in an OOM kill, as a node without swap does.
    if (existsSync(join(dir, swapFile))) writeFileSync(join(dir, swapFile), version === "v1" ? String(bytes) : "0");
  } catch (err) {
    rmdirSync(dir);
    return { why: `a cgroup ${version} here takes no memory limit (${(err as Error).message})` };
  }
  return {
    how: `a memory cgroup (${version}) of ${(bytes / 2 ** 20).toFixed(0)} MiB`,
    // The shell puts itself in the cgroup and becomes the command: one process, one pid. It exits
    // 2 if it cannot join the cgroup, 127 if the command is missing.
    wrap: (argv) => ({
      command: "/bin/sh",
      args: ["-c", 'echo $$ > "$0" && exec "$@"', join(dir, "cgroup.procs"), ...argv],
    }),
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

/**
 * The lines of a /proc/<pid>/cgroup that place it for memory: cgroup v1's memory controller, and
 * the unified (v2) hierarchy. Each is hierarchy-id:controllers:path, and a path may hold colons.
 */
function memoryCgroupLines(membership: string): { v1?: { path: string }; v2?: { path: string } } {
  const lines = membership.split("\n").map((l) => {
    const [id, controllers, ...path] = l.split(":");
    return { id, controllers: controllers?.split(",") ?? [], path: path.join(":") };
  });
  return { v1: lines.find((l) => l.controllers.includes("memory")), v2: lines.find((l) => l.id === "0") };
}

/** The command and arguments that run `argv`: inside the cgroup when there is one, else as they are. */
export function commandIn(
  cgroup: MemoryCgroup | { why: string } | undefined,
  argv: readonly string[],
): { command: string; args: string[] } {
  return cgroup && "wrap" in cgroup ? cgroup.wrap(argv) : { command: argv[0]!, args: argv.slice(1) };
}

function ownCgroups(): string | null {
  try {
    return readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return null;
  }
}

function controllersOfChildren(cgroup: string): string[] {
  try {
    return readFileSync(join(cgroup, "cgroup.subtree_control"), "utf8").split(/\s+/);
  } catch {
    return [];
  }
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
    const creator = ABANDONED.exec(entry)?.[1];
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
