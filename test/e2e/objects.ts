// The objects the e2e suite makes on the user's cluster: namespaces it labels (its teardown deletes
// them by the label) and a pair (the DynamoPoolRelay g1 beside the DGD g1) with the Relay image given.
import { randomBytes } from "node:crypto";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { dgdObject } from "../integration/helpers.ts";
import { E2E_NAMESPACE_LABEL } from "./settings.ts";

export const E2E_MANAGER = "dynamo-pool-relay/e2e";

/** Requests a small cluster can hold, two replicas beside Knative. */
const RELAY_RESOURCES = { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "1Gi" } };

export function e2eDpr(namespace: string, relayImage: string): KubeObject {
  return {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name: "g1", namespace },
    spec: { image: relayImage, clusterID: "e2e-cluster", resources: RELAY_RESOURCES },
  };
}

/** A new namespace with the suite's label. */
export async function e2eNamespace(admin: KubeClient, prefix = "e2e"): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await admin.apply(
    { apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { [E2E_NAMESPACE_LABEL]: "true" } } },
    E2E_MANAGER,
  );
  return name;
}

/** The pair g1 in `namespace`: its DGD, then its DynamoPoolRelay (answered as created). */
export async function createPair(admin: KubeClient, namespace: string, relayImage: string): Promise<KubeObject> {
  await admin.apply(dgdObject(namespace, "g1"), E2E_MANAGER);
  return admin.apply(e2eDpr(namespace, relayImage), E2E_MANAGER);
}
