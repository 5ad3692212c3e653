/**
 * The cluster-local Service `<dgd>-pool-relay`: the Relay's published address. Only Ready pods are
 * behind it, so a ready endpoint means a listening Relay. It carries the discovery labels, which
 * its EndpointSlices inherit, because Dynamo's Kubernetes discovery only watches labelled slices.
 */
import type { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { DISCOVERY_LABELS, GRPC_PORT, selectorLabels } from "../names.ts";
import { childMeta } from "./metadata.ts";

export function renderService(dpr: DynamoPoolRelay) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(dpr, DISCOVERY_LABELS),
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(dpr.metadata.name),
      publishNotReadyAddresses: false,
      ports: [{ name: "grpc", port: GRPC_PORT, targetPort: "grpc", protocol: "TCP", appProtocol: "kubernetes.io/h2c" }],
    },
  };
}
