// The memory of the functions' pods on the real node, sampled while a bench runs: Knative deletes
// a function's pod once it is idle (window 10s, knative/services.yaml), and its cgroup with it, so
// what a pod used is read while it is there. The container's cgroup (cgroup v1, the kubelet's
// cgroupfs driver) holds its processes only, each restart's alike: its peak usage covers them all.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PRODUCT_NAMESPACE } from "../dev/product.ts";
import type { KubeClient } from "../shared/kube/client.ts";

const MEMORY = "/sys/fs/cgroup/memory";

interface Pod {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  status?: {
    containerStatuses?: {
      name: string;
      containerID?: string;
      restartCount: number;
      lastState?: { terminated?: { reason?: string } };
    }[];
  };
}

export interface FunctionMemory {
  /** The Knative Service. */
  name: string;
  pods: number;
  /** The highest peak of any of its pods' `function` containers (memory.max_usage_in_bytes, page cache included). */
  peakMiB: number | undefined;
  restarts: number;
  reason?: string;
}

/** A container's memory cgroup on a node of this machine, by its pod's UID and its runtime ID; undefined once it is gone. */
function containerMemoryCgroup(podUid: string, containerId: string, root = MEMORY): string | undefined {
  const nodes = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, "kubepods"))) : [];
  // The pod's QoS class puts it directly under kubepods (Guaranteed) or a level below.
  const candidates = nodes.flatMap((n) =>
    ["", "burstable", "besteffort"].map((qos) => join(root, n, "kubepods", qos, `pod${podUid}`, containerId)),
  );
  return candidates.find((c) => existsSync(c));
}

/** Samples every `everyMs` until `stop`, which gives each function Service's pods as the run left them. */
export function sampleFunctionMemory(admin: KubeClient, everyMs = 2000): { stop(): Promise<FunctionMemory[]> } {
  const peaks = new Map<string, { service: string; peak?: number; restarts: number; reason?: string }>();
  const sample = async () => {
    let pods: Pod[];
    try {
      pods = await admin.list<Pod>("v1", "Pod", PRODUCT_NAMESPACE, "serving.knative.dev/service");
    } catch {
      // The API server under the bench's burst failed this list: the next sample follows; a
      // Service never sampled shows "not measured".
      return;
    }
    for (const pod of pods) {
      const c = pod.status?.containerStatuses?.find((s) => s.name === "function");
      const seen = peaks.get(pod.metadata.uid) ?? {
        service: pod.metadata.labels!["serving.knative.dev/service"]!,
        restarts: 0,
      };
      peaks.set(pod.metadata.uid, seen);
      if (!c) continue;
      seen.restarts = c.restartCount;
      const reason = c.lastState?.terminated?.reason;
      if (reason) seen.reason = reason;
      const cgroup = c.containerID && containerMemoryCgroup(pod.metadata.uid, c.containerID.replace(/^\w+:\/\//, ""));
      if (!cgroup) continue;
      try {
        seen.peak = Math.max(seen.peak ?? 0, Number(readFileSync(join(cgroup, "memory.max_usage_in_bytes"), "utf8")));
      } catch {
        // The container went between the look and the read.
      }
    }
  };
  let running = sample();
  const timer = setInterval(() => void (running = running.then(sample)), everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running.then(sample);
      const services = Map.groupBy(peaks.values(), (p) => p.service);
      return [...services]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, pods]) => {
          const measured = pods.flatMap((p) => (p.peak === undefined ? [] : [p.peak]));
          const reason = pods.find((p) => p.reason)?.reason;
          return {
            name,
            pods: pods.length,
            peakMiB: measured.length ? Math.max(...measured) / 2 ** 20 : undefined,
            restarts: pods.reduce((n, p) => n + p.restarts, 0),
            ...(reason ? { reason } : {}),
          };
        });
    },
  };
}
