// The local kubelet runs each function as its pod's container runs: under the memory limit its
// Knative Service declares (knative/services.yaml), in a memory cgroup, where Node sizes V8's heap
// from it.
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { workloadStates } from "../../dev/knative/index.ts";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";

const LIMIT = 256 * 2 ** 20;

/** The memory limit of the cgroup a process is in, as the kernel holds it. */
function cgroupLimit(pid: number): number {
  const lines = readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n").map((l) => l.split(":"));
  const v1 = lines.find(([, controllers]) => controllers!.split(",").includes("memory"));
  const file = v1 ? `/sys/fs/cgroup/memory${v1[2]}/memory.limit_in_bytes` : `/sys/fs/cgroup${lines.find(([id]) => id === "0")![2]}/memory.max`;
  const text = readFileSync(file, "utf8").trim();
  return text === "max" ? Infinity : Number(text);
}

describe("the local kubelet", () => {
  it("runs each function under its Knative Service's memory limit, in a memory cgroup of its own", () => {
    const functions = workloadStates(inject("controlPlaneDir")).filter((w) => w.workload.startsWith(`KnativeService ${PRODUCT_NAMESPACE}/`) && w.state === "running");
    // A Service being rolled runs two processes for a while: each is checked.
    expect([...new Set(functions.map((w) => w.workload.split("/")[1]))].sort()).toEqual(["poolrelay-apply", "poolrelay-dead-letter", "poolrelay-eligibility", "poolrelay-status"]);
    for (const w of functions) {
      expect(w.memoryLimit, w.workload).toBeDefined();
      if (w.memoryLimit!.startsWith("not applied")) {
        // A machine where this user may not make a cgroup: said so, and the process is not limited to it.
        expect(cgroupLimit(w.pid!), w.workload).not.toBe(LIMIT);
      } else {
        expect(w.memoryLimit, w.workload).toMatch(/^a memory cgroup \(v[12]\) of 256 MiB$/);
        expect(readFileSync(`/proc/${w.pid}/cgroup`, "utf8"), w.workload).toMatch(/dynamo-pool-relay-\d+-\d+$/m);
        expect(cgroupLimit(w.pid!), w.workload).toBe(LIMIT);
      }
    }
  });
});
