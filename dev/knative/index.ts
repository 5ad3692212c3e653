/**
 * The real Knative Eventing on the local control plane (profile `knative`): Knative's manifests,
 * its reconcilers in one process (eventing-controllers), and the pod host (host-main.ts: the
 * cluster-address proxy and the local kubelet, which runs the broker ingress and filter, the
 * InMemoryChannel dispatcher, the PingSource adapter and every ApiServerSource adapter as local
 * processes, from the Deployments Knative itself creates).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeClient } from "../../shared/kube/client.ts";
import type { KnativeAssets } from "../control-plane/binaries.ts";
import { freePort } from "../control-plane/ports.ts";
import { startComponent, type Component } from "../control-plane/processes.ts";
import { controllerEnv, DATA_PLANE, knativeObjects, SYSTEM_NAMESPACE } from "./install.ts";

const HOST_MAIN = fileURLToPath(new URL("./host-main.ts", import.meta.url));
const FIELD_MANAGER = "dynamo-pool-relay/control-plane";

export interface WorkloadState {
  workload: string;
  /** The generation of the Deployment or Knative Service this process runs. */
  generation: number;
  container: string;
  program: string;
  state: "waiting" | "starting" | "running" | "crashed";
  reason?: string;
  /** How the container's memory limit applies to the process (bench/memory-cgroup.ts), when it declares one. */
  memoryLimit?: string;
  /** Its processes the kernel killed for going over that limit (`OOMKilled`), restarts included. */
  oomKills: number;
  pid?: number;
  ports: Record<string, number>;
  restarts: number;
  log: string;
}

/** What the local kubelet runs now (DIR/workloads.json). */
export function workloadStates(dir: string): WorkloadState[] {
  const file = join(dir, "workloads.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as WorkloadState[]) : [];
}

/** Every address the proxy refused so far (DIR/proxy-refused.log), one line each. */
export function proxyRefusals(dir: string): string[] {
  const file = join(dir, "proxy-refused.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

export interface KnativeStart {
  client: KubeClient;
  assets: KnativeAssets;
  dir: string;
  kubeconfig: string;
  server: string;
  /** Where the product's functions reach the API server, when not at `server` (same CA). */
  productServer?: string;
  caFile: string;
  record: (c: Component) => Component;
  until: <T>(what: string, probe: () => Promise<T | undefined>) => Promise<T>;
  log: (line: string) => void;
}

export async function startKnative(k: KnativeStart): Promise<void> {
  const started = Date.now();
  for (const obj of knativeObjects(k.assets.config)) await k.client.apply(obj, FIELD_MANAGER, { force: true });

  k.record(startComponent("pod-host", process.execPath, [
    HOST_MAIN, `--dir=${k.dir}`, `--kubeconfig=${k.kubeconfig}`, `--server=${k.server}`, `--ca=${k.caFile}`, `--bin=${k.assets.bin}`,
    ...(k.productServer ? [`--product-server=${k.productServer}`] : []),
  ], k.dir));
  const host = await k.until("the pod host's proxy", async () => {
    const file = join(k.dir, "host.json");
    return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { proxy: string }) : undefined;
  });

  k.record(startComponent("eventing-controllers", `${k.assets.bin}/eventing-controllers`, [`--kubeconfig=${k.kubeconfig}`], k.dir, {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: process.env["HOME"] ?? "/tmp",
    ...controllerEnv(k.assets.config),
    CLUSTER_DOMAIN: "cluster.local",
    PROFILING_PORT: String(await freePort()),
    HTTP_PROXY: host.proxy,
    HTTPS_PROXY: host.proxy,
    NO_PROXY: "127.0.0.1,localhost",
  }));

  // The data plane is up when the kubelet runs it (the dispatcher holding its ports) and the
  // Deployments are Available (kwok's pods are what Knative's reconcilers check).
  const always = DATA_PLANE.filter((d) => d !== "pingsource-mt-adapter");
  await k.until(`the Knative data plane (${always.join(", ")}) running`, async () => {
    const states = workloadStates(k.dir);
    const down = always.filter((d) => !states.some((s) => s.workload === `Deployment ${SYSTEM_NAMESPACE}/${d}` && s.state === "running"));
    const blocked = states.find((s) => s.state !== "running" && s.reason?.includes("already in use"));
    if (blocked) throw new FatalStartError(`${blocked.workload}: ${blocked.reason}`);
    return down.length === 0 ? true : undefined;
  });
  k.log(`Knative Eventing data plane running (${Date.now() - started} ms)`);
}

/** A start failure that no retry can fix (another run holds the dispatcher's fixed ports). */
export class FatalStartError extends Error {
  override name = "FatalStartError";
}
