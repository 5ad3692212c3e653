// A bench's function process under the memory limit its Knative Service declares, as the kubelet
// runs a pod's container: in a memory cgroup of its own. Node sizes V8's heap from that limit
// (process.constrainedMemory: 256Mi gives a heap limit of 259 MiB here, none gives 4 GiB), and V8
// collects more eagerly under a small limit, so a function's peak RSS is measured as in a pod, not
// as on a host with 24 GiB. Where this user may not create a cgroup, the bench says so and runs
// the process unlimited.
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { quantityValue } from "../shared/quantity.ts";
import { knativeDocs } from "./knative-settings.ts";

export interface MemoryLimit {
  /** How the limit is applied, for the bench's report. */
  how: string;
  /** The command and arguments that run `argv` inside the cgroup. */
  wrap(argv: readonly string[]): { command: string; args: string[] };
  /** Removes the cgroup; its processes must have exited. */
  remove(): void;
}

/** The memory limit of a function's Knative Service (knative/services.yaml), in bytes. */
export function serviceMemoryLimit(target: string): { text: string; bytes: number } {
  const service = knativeDocs("services.yaml").find((d) => d.metadata.name === `poolrelay-${target}`);
  const text = service?.spec.template?.spec.containers[0]?.resources?.limits?.memory;
  const value = text === undefined ? undefined : quantityValue(text);
  if (!text || !value) throw new Error(`knative/services.yaml declares no memory limit for poolrelay-${target}`);
  return { text, bytes: Number(value.num / value.den) };
}

let made = 0;

/**
 * A memory cgroup limited to `bytes` under this process's own, or why there is none.
 *
 * @param membership this process's /proc/self/cgroup
 * @param root where the cgroup hierarchies are mounted
 */
export function memoryLimit(bytes: number, membership = readFileSync("/proc/self/cgroup", "utf8"), root = "/sys/fs/cgroup"): MemoryLimit | { why: string } {
  const lines = membership.trim().split("\n").map((l) => l.split(":"));
  const v1 = lines.find(([, controllers]) => controllers!.split(",").includes("memory"));
  const v2 = lines.find(([id, controllers]) => id === "0" && controllers === "");
  const name = `dynamo-pool-relay-bench-${process.pid}-${made++}`;
  const [dir, file, version] = v1
    ? [`${root}/memory${v1[2]}/${name}`.replace("//", "/"), "memory.limit_in_bytes", "v1"]
    : [`${root}${v2?.[2] ?? ""}/${name}`.replace("//", "/"), "memory.max", "v2"];
  try {
    mkdirSync(dir);
  } catch (err) {
    return { why: `no memory cgroup (${(err as Error).message})` };
  }
  try {
    writeFileSync(`${dir}/${file}`, String(bytes));
  } catch (err) {
    rmdirSync(dir);
    return { why: `no memory limit on a cgroup ${version} (${(err as Error).message})` };
  }
  return {
    how: `a memory cgroup (${version}) of ${(bytes / 2 ** 20).toFixed(0)} MiB`,
    // The shell puts itself in the cgroup and becomes the function: the pid is the function's.
    wrap: (argv) => ({ command: "/bin/sh", args: ["-c", 'echo $$ > "$0" && exec "$@"', `${dir}/cgroup.procs`, ...argv] }),
    remove: () => rmdirSync(dir),
  };
}
