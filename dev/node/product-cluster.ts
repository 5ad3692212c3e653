/**
 * A local control plane of profile node (a real kubelet, Knative Serving and Eventing as pods) with
 * the product installed from knative/ as a user installs it (the images built here), its Knative
 * objects Ready, and a log agent keeping every container's log after its pod goes: what the benches
 * run on, and the test suites alike.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../shared/kube/client.ts";
import { ensureBinaries } from "../control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "../control-plane/index.ts";
import { installProduct, PRODUCT_NAMESPACE, waitProductReady } from "../product.ts";
import { followPodLogs, type PodLogs } from "./pod-logs.ts";
import { clusterUrlFromHost, productOnNode } from "./product-services.ts";

export const BROKER = "dynamo-pool-relay";
/** The functions' container in their Knative Services (knative/services.yaml). */
const FUNCTION_CONTAINER = "function";

export interface ProductCluster extends ControlPlane {
  /** The Broker's ingress as this host reaches it (its Service's ClusterIP, routed through the node). */
  brokerIngress: string;
  /** Where the log agent keeps each container's log: `<logs>/<namespace>/<pod>/<container>.log`. */
  logs: string;
  /**
   * Every line of every function pod, in the order the log agent found them: append-only across
   * pods, so a count taken before an action marks where what it caused begins.
   */
  functionsLog: string;
  /** The log agent: `sweep()` copies what is new now, for a reader that cannot wait for its next poll. */
  podLogs: PodLogs;
  /** Where pods reach this host: the host's end of the node's link, where the API server listens. */
  hostAddress: string;
}

export interface ProductClusterOptions {
  fieldManager: string;
  log?: (line: string) => void;
  /** Changes the product's objects before they are applied; gets the control plane, for what it starts first. */
  edit?: (objects: KubeObject[], controlPlane: ControlPlane) => KubeObject[] | Promise<KubeObject[]>;
}

export async function startProductCluster(o: ProductClusterOptions): Promise<ProductCluster> {
  const controlPlane = await startControlPlane({
    profile: "node",
    ownerPid: process.pid,
    timeoutMs: 180_000,
    ...(o.log ? { log: o.log } : {}),
  });
  const logs = join(controlPlane.dir, "logs");
  const functionsLog = join(controlPlane.dir, "functions.log");
  writeFileSync(functionsLog, "");
  const podLogs = followPodLogs(join(controlPlane.dir, "node", "pod-logs"), logs, (c, text) => {
    if (c.namespace === PRODUCT_NAMESPACE && c.container === FUNCTION_CONTAINER)
      appendFileSync(functionsLog, `${text}\n`);
  });
  const stop = async () => {
    podLogs.stop();
    await controlPlane.stop();
  };
  try {
    const kubectl = ensureBinaries().kubectl;
    const product = productOnNode(kubectl);
    const objects = await installProduct(
      controlPlane.client,
      kubectl,
      o.fieldManager,
      o.edit ? await o.edit(product, controlPlane) : product,
    );
    // Knative's first pods (the functions', the Broker's) start on a node that may be busy: minutes, not seconds.
    await waitProductReady(controlPlane.client, objects, 240_000);
    const broker = await controlPlane.client.get<{ status?: { address?: { url?: string } } }>({
      apiVersion: "eventing.knative.dev/v1",
      kind: "Broker",
      namespace: PRODUCT_NAMESPACE,
      name: BROKER,
    });
    const brokerIngress = await clusterUrlFromHost(controlPlane.client, broker!.status!.address!.url!);
    return {
      ...controlPlane,
      stop,
      brokerIngress,
      logs,
      functionsLog,
      podLogs,
      hostAddress: new URL(controlPlane.server).hostname,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
