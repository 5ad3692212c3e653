// The product as the node suite installs it: `kubectl kustomize knative/` with the images built
// here, applied, and every Knative object of it Ready under Knative's own controllers.
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { productOnNode } from "../../dev/node/product-services.ts";
import { installProduct, productReadiness } from "../../dev/product.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { eventually, TEST_MANAGER } from "../integration/helpers.ts";

/** Installs the product (again: each file's test may run first) and answers its objects once all are Ready. */
export async function installedProduct(client: KubeClient): Promise<KubeObject[]> {
  const kubectl = ensureBinaries().kubectl;
  const objects = productOnNode(kubectl);
  await installProduct(client, kubectl, TEST_MANAGER, objects);
  await eventually(
    "every Knative object of the product Ready",
    async () => (await productReadiness(client, objects)).every((r) => r.ready),
    240_000,
  );
  return objects;
}
