/**
 * What the Relay's runtime calls in Pod-mode Kubernetes discovery: it watches EndpointSlices and
 * reads and writes its own DynamoWorkerMetadata. No Pod access: that is container mode only.
 */
import type { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { childMeta } from "./metadata.ts";

export const RELAY_RULES = [
  {
    apiGroups: ["nvidia.com"],
    resources: ["dynamoworkermetadatas"],
    verbs: ["get", "list", "watch", "create", "patch", "delete"],
  },
  {
    apiGroups: ["discovery.k8s.io"],
    resources: ["endpointslices"],
    verbs: ["get", "list", "watch"],
  },
];

export function renderRole(dpr: DynamoPoolRelay) {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: childMeta(dpr),
    rules: RELAY_RULES.map((r) => ({ apiGroups: [...r.apiGroups], resources: [...r.resources], verbs: [...r.verbs] })),
  };
}
