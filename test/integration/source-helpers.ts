// The event source's replicas and the ApiServerSource's adapter on the real node, as the tests of
// their gaps find, stop, scale and read them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";
import { SOURCE_LEASE } from "../../shared/config.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { containerPids, runningContainer, type RunningContainer } from "../node-containers.ts";
import { eventually } from "./helpers.ts";

export const SOURCE_SELECTOR = "app.kubernetes.io/name=poolrelay-source";
const DEPLOYMENT = `/apis/apps/v1/namespaces/${PRODUCT_NAMESPACE}/deployments/poolrelay-source`;

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; containerID?: string; restartCount: number; state?: { running?: object } }[];
  };
}

/** The source's running containers, by pod. */
export async function sourceContainers(admin: KubeClient): Promise<RunningContainer[]> {
  const pods = (await admin.list<Pod>("v1", "Pod", PRODUCT_NAMESPACE, SOURCE_SELECTOR)).filter(
    (p) => !p.metadata.deletionTimestamp,
  );
  return pods.flatMap((p) => {
    const status = p.status?.containerStatuses?.find((c) => c.name === "source");
    return status?.state?.running && status.containerID
      ? [
          {
            pod: p.metadata.name,
            uid: p.metadata.uid,
            id: status.containerID.replace(/^\w+:\/\//, ""),
            restartCount: status.restartCount,
          },
        ]
      : [];
  });
}

/** The Lease's holder: its identity, and the pod it runs in (the identity is `<pod>_<process>`). */
export async function sourceLeader(admin: KubeClient): Promise<{ identity: string; pod: string } | undefined> {
  const lease = await admin.get<{ spec?: { holderIdentity?: string } }>({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    namespace: PRODUCT_NAMESPACE,
    name: SOURCE_LEASE,
  });
  const identity = lease?.spec?.holderIdentity;
  return identity ? { identity, pod: identity.slice(0, identity.lastIndexOf("_")) } : undefined;
}

/** Scales the source and waits until that many replicas run, Ready, and (when any) one of them holds the Lease. */
export async function scaleSource(admin: KubeClient, replicas: number): Promise<void> {
  await admin.request("PATCH", DEPLOYMENT, { spec: { replicas } }, "application/merge-patch+json");
  await eventually(
    `the event source at ${replicas} Ready replicas`,
    async () => {
      const pods = await admin.list<Pod>("v1", "Pod", PRODUCT_NAMESPACE, SOURCE_SELECTOR);
      if (pods.length !== replicas) return false;
      if (
        !pods.every(
          (p) =>
            !p.metadata.deletionTimestamp &&
            p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        )
      )
        return false;
      if (replicas === 0) return true;
      const leader = await sourceLeader(admin);
      return pods.some((p) => p.metadata.name === leader?.pod);
    },
    180_000,
  );
}

/** Rolls the source's pods as `kubectl rollout restart` does; resolves once the rollout began. */
export async function restartSource(admin: KubeClient): Promise<void> {
  const patch = {
    spec: {
      template: { metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": new Date().toISOString() } } },
    },
  };
  await admin.request("PATCH", DEPLOYMENT, patch, "application/merge-patch+json");
}

/** Whether the source's rollout is complete: every replica of the current template, available. */
export async function sourceRolledOut(admin: KubeClient): Promise<boolean> {
  const d = await admin.get<{
    metadata: { generation: number };
    spec: { replicas: number };
    status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  }>({ apiVersion: "apps/v1", kind: "Deployment", namespace: PRODUCT_NAMESPACE, name: "poolrelay-source" });
  const s = d?.status ?? {};
  return (
    !!d &&
    (s.observedGeneration ?? 0) >= d.metadata.generation &&
    s.replicas === d.spec.replicas &&
    s.updatedReplicas === d.spec.replicas &&
    s.availableReplicas === d.spec.replicas
  );
}

/** The source's log lines (JSON), over all its pods and restarts, with the pod each came from. */
export function sourceLog(): (Record<string, unknown> & { pod: string })[] {
  const dir = join(inject("logs"), PRODUCT_NAMESPACE);
  return readdirSync(dir)
    .filter((pod) => pod.startsWith("poolrelay-source-"))
    .flatMap((pod) => {
      try {
        return readFileSync(join(dir, pod, "source.log"), "utf8")
          .split("\n")
          .map((l) => ({ pod, l }));
      } catch {
        return [];
      }
    })
    .filter(({ l }) => l.startsWith("{"))
    .map(({ pod, l }) => ({ ...(JSON.parse(l) as Record<string, unknown>), pod }));
}

/** The running container of the ApiServerSource's receive adapter, while there is one adapter with one pod. */
export async function receiveAdapter(admin: KubeClient, namespace: string): Promise<RunningContainer | undefined> {
  type Adapter = {
    metadata: { name: string; generation?: number };
    spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: unknown };
    status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  };
  const adapters = (await admin.list<Adapter>("apps/v1", "Deployment", PRODUCT_NAMESPACE)).filter((d) =>
    d.metadata.name.startsWith("apiserversource-"),
  );
  if (adapters.length !== 1) return undefined;
  const adapter = adapters[0]!;
  // Its pods watch the namespaces its template lists (the ApiServerSource's namespaceSelector):
  // until the roll that adds `namespace` is over, a pod of it may still start, list and send.
  const { status } = adapter;
  const want = adapter.spec.replicas ?? 1;
  if (
    !JSON.stringify(adapter.spec.template).includes(namespace) ||
    status?.observedGeneration !== adapter.metadata.generation ||
    status?.updatedReplicas !== want ||
    status.replicas !== want ||
    status.availableReplicas !== want
  )
    return undefined;
  const selector = Object.entries(adapter.spec.selector.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return runningContainer(admin, PRODUCT_NAMESPACE, selector, "receive-adapter");
}

/** The resident memory of a container's processes on the node, in bytes. */
export function containerRss(container: RunningContainer): number {
  return containerPids(container.id).reduce((sum, pid) => {
    try {
      const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      return sum + Number(kib ?? 0) * 1024;
    } catch {
      return sum;
    }
  }, 0);
}
