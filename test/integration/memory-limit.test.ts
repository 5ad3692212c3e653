// The local kubelet runs each function as its pod's container runs: under the memory limit its
// Knative Service declares (knative/services.yaml), in a memory cgroup, where Node sizes V8's heap
// from it.
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { workloadStates, type WorkloadState } from "../../dev/knative/index.ts";
import { memoryCgroupLines } from "../../dev/knative/memory-cgroup.ts";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";
import { eventually } from "./helpers.ts";

const LIMIT = 256 * 2 ** 20;

/** The memory cgroup a process is in and its limit, as the kernel holds them; undefined once it has exited. */
function cgroupOf(pid: number): { path: string; limit: number } | undefined {
  let membership: string;
  try {
    membership = readFileSync(`/proc/${pid}/cgroup`, "utf8");
  } catch {
    return undefined;
  }
  const { v1, v2 } = memoryCgroupLines(membership);
  const path = (v1 ?? v2)!.path;
  const text = readFileSync(v1 ? `/sys/fs/cgroup/memory${path}/memory.limit_in_bytes` : `/sys/fs/cgroup${path}/memory.max`, "utf8").trim();
  return { path, limit: text === "max" ? Infinity : Number(text) };
}

describe("the local kubelet", () => {
  it("runs each function under its Knative Service's memory limit, in a memory cgroup of its own", async () => {
    // The processes as one reading of workloads.json names them (a restart since moves on to the next reading).
    const running = () => workloadStates(inject("controlPlaneDir")).filter((w) => w.workload.startsWith(`KnativeService ${PRODUCT_NAMESPACE}/`) && w.state === "running");
    const checked = await eventually("every function process still there to be read", async () => {
      const states = running().map((w) => ({ w, cgroup: cgroupOf(w.pid!) }));
      return states.every((s) => s.cgroup) ? (states as { w: WorkloadState; cgroup: NonNullable<ReturnType<typeof cgroupOf>> }[]) : undefined;
    });
    // A Service being rolled runs two processes for a while: each is checked.
    expect([...new Set(checked.map(({ w }) => w.workload.split("/")[1]))].sort()).toEqual(["poolrelay-apply", "poolrelay-dead-letter", "poolrelay-eligibility", "poolrelay-status"]);
    for (const { w, cgroup } of checked) {
      expect(w.memoryLimit, w.workload).toBeDefined();
      if (w.memoryLimit!.startsWith("not applied")) {
        // A machine where this user may not make a cgroup: said so, and the process is not limited to it.
        expect(cgroup.limit, w.workload).not.toBe(LIMIT);
      } else {
        expect(w.memoryLimit, w.workload).toMatch(/^a memory cgroup \(v[12]\) of 256 MiB$/);
        expect(cgroup.path, w.workload).toMatch(/\/dynamo-pool-relay-\d+-\d+$/);
        expect(cgroup.limit, w.workload).toBe(LIMIT);
      }
    }
  });
});
