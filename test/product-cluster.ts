// The cluster the integration and fault suites run on (dev/node/product-cluster.ts): profile node
// with the product installed from knative/, its Knative objects Ready, every container's log kept.
// Starting it is part of the test run: when it cannot start, the run fails.
import type { ControlPlane } from "../dev/control-plane/index.ts";
import { startProductCluster as start, type ProductCluster } from "../dev/node/product-cluster.ts";
import type { KubeObject } from "../shared/kube/client.ts";

export type { ProductCluster };

/**
 * `edit` changes the product's objects before they are applied; it gets the control plane, for what
 * it starts first (the fault suite's proxies, on the address pods reach this host at, with the API
 * server's certificate).
 */
export async function startProductCluster(
  edit?: (objects: KubeObject[], controlPlane: ControlPlane) => KubeObject[] | Promise<KubeObject[]>,
): Promise<ProductCluster> {
  const started = Date.now();
  const cluster = await start({
    fieldManager: "dynamo-pool-relay/test-install",
    log: (l) => console.log(`[control-plane] ${l}`),
    ...(edit ? { edit } : {}),
  });
  console.log(
    `[control-plane] Knative and the product Ready in ${Date.now() - started} ms; kubeconfig ${cluster.kubeconfig}`,
  );
  return cluster;
}
