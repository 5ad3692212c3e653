/**
 * Metadata every child carries: one name, the product's labels and a controller reference to the
 * DynamoPoolRelay, so garbage collection removes the children with it and nobody else adopts them.
 */
import type { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { API_VERSION, KIND, childName, commonLabels } from "../names.ts";

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: true;
  blockOwnerDeletion: true;
}

export interface ChildMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export function ownerReference(dpr: DynamoPoolRelay): OwnerReference | undefined {
  if (!dpr.metadata.uid) return undefined;
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: dpr.metadata.name,
    uid: dpr.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Offline renders have no UID to point at, so they carry no ownerReference rather than a wrong one. */
export function childMeta(dpr: DynamoPoolRelay, extraLabels: Record<string, string> = {}): ChildMeta {
  const owner = ownerReference(dpr);
  return {
    name: childName(dpr.metadata.name),
    namespace: dpr.metadata.namespace ?? "default",
    labels: { ...commonLabels(dpr.metadata.name), ...extraLabels },
    ...(owner ? { ownerReferences: [owner] } : {}),
  };
}
