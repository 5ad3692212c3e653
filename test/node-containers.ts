// A container crashing on the real node, as a test makes it crash: its processes SIGKILLed (the
// host sees the node's processes; each is in a cgroup named after its container's ID), so it is
// down at once, and the kubelet restarts it.
import { readdirSync, readFileSync } from "node:fs";
import type { KubeClient } from "../shared/kube/client.ts";

export interface RunningContainer {
  pod: string;
  uid: string;
  /** The runtime's ID, without `containerd://`. */
  id: string;
  restartCount: number;
}

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: {
    containerStatuses?: { name: string; containerID?: string; restartCount: number; state?: { running?: object } }[];
  };
}

/** The running container `name` of the one live pod that `selector` finds in `namespace`; undefined while there is not exactly one. */
export async function runningContainer(
  client: KubeClient,
  namespace: string,
  selector: string,
  name: string,
): Promise<RunningContainer | undefined> {
  const pods = (await client.list<Pod>("v1", "Pod", namespace, selector)).filter((p) => !p.metadata.deletionTimestamp);
  if (pods.length !== 1) return undefined;
  const status = pods[0]!.status?.containerStatuses?.find((c) => c.name === name);
  if (!status?.state?.running || !status.containerID) return undefined;
  return {
    pod: pods[0]!.metadata.name,
    uid: pods[0]!.metadata.uid,
    id: status.containerID.replace(/^\w+:\/\//, ""),
    restartCount: status.restartCount,
  };
}

/** The host's PIDs of a container's processes. */
export function containerPids(id: string): number[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cgroup`, "utf8").includes(id);
      } catch {
        return false;
      }
    });
}

/** SIGKILLs every process of the container; throws when it has none (the wrong container). */
export function crash(container: RunningContainer): void {
  const pids = containerPids(container.id);
  if (pids.length === 0)
    throw new Error(`container ${container.id} of pod ${container.pod} has no process on this host`);
  for (const pid of pids) process.kill(pid, "SIGKILL");
}

/** Stops every process of the container (SIGSTOP) until `resume`: it holds its connections but reads nothing. */
export function pause(container: RunningContainer): void {
  const pids = containerPids(container.id);
  if (pids.length === 0)
    throw new Error(`container ${container.id} of pod ${container.pod} has no process on this host`);
  for (const pid of pids) process.kill(pid, "SIGSTOP");
}

export function resume(container: RunningContainer): void {
  for (const pid of containerPids(container.id)) process.kill(pid, "SIGCONT");
}
