/** Binds the Relay's Role to its ServiceAccount. */
import type { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { childName } from "../names.ts";
import { childMeta } from "./metadata.ts";

export function renderRoleBinding(dpr: DynamoPoolRelay) {
  const meta = childMeta(dpr);
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: meta,
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: childName(dpr.metadata.name) },
    subjects: [{ kind: "ServiceAccount", name: meta.name, namespace: meta.namespace }],
  };
}
