// The cluster the integration and fault suites run on: a local control plane of profile node (a
// real kubelet, Knative Serving and Eventing as pods) with the product installed from knative/ as a
// user installs it, its Knative objects Ready, and a log agent keeping every container's log.
// Starting it is part of the test run: when it cannot start, the run fails.
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinaries } from "../dev/control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "../dev/control-plane/index.ts";
import { followPodLogs } from "../dev/node/pod-logs.ts";
import { clusterUrlFromHost, productOnNode } from "../dev/node/product-services.ts";
import { installProduct, productReadiness, PRODUCT_NAMESPACE } from "../dev/product.ts";
import type { KubeObject } from "../shared/kube/client.ts";

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
}

/**
 * `edit` changes the product's objects before they are applied; it gets the control plane, for what
 * it starts first (the fault suite's proxies, on the address pods reach this host at, with the API
 * server's certificate).
 */
export async function startProductCluster(edit: (objects: KubeObject[], controlPlane: ControlPlane) => KubeObject[] | Promise<KubeObject[]> = (o) => o): Promise<ProductCluster> {
  const started = Date.now();
  const controlPlane = await startControlPlane({ profile: "node", ownerPid: process.pid, timeoutMs: 180_000, log: (l) => console.log(`[control-plane] ${l}`) });
  const logs = join(controlPlane.dir, "logs");
  const functionsLog = join(controlPlane.dir, "functions.log");
  writeFileSync(functionsLog, "");
  const agent = followPodLogs(join(controlPlane.dir, "node", "pod-logs"), logs, (c, text) => {
    if (c.namespace === PRODUCT_NAMESPACE && c.container === FUNCTION_CONTAINER) appendFileSync(functionsLog, `${text}\n`);
  });
  const stop = async () => {
    agent.stop();
    await controlPlane.stop();
  };
  try {
    const kubectl = ensureBinaries().kubectl;
    const objects = await installProduct(controlPlane.client, kubectl, "dynamo-pool-relay/test-install", await edit(productOnNode(kubectl), controlPlane));
    const deadline = Date.now() + 240_000;
    for (;;) {
      const readiness = await productReadiness(controlPlane.client, objects);
      if (readiness.every((r) => r.ready)) break;
      if (Date.now() > deadline) {
        throw new Error(`the product's Knative objects did not go Ready:\n${readiness.filter((r) => !r.ready).map((r) => `  ${r.object}: ${r.detail}`).join("\n")}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const broker = await controlPlane.client.get<{ status?: { address?: { url?: string } } }>({ apiVersion: "eventing.knative.dev/v1", kind: "Broker", namespace: PRODUCT_NAMESPACE, name: BROKER });
    const brokerIngress = await clusterUrlFromHost(controlPlane.client, broker!.status!.address!.url!);
    console.log(`[control-plane] Knative and the product Ready in ${Date.now() - started} ms; kubeconfig ${controlPlane.kubeconfig}`);
    return { ...controlPlane, stop, brokerIngress, logs, functionsLog };
  } catch (err) {
    await stop();
    throw err;
  }
}
