// The pair team-a/g1 as the event source sees it once the product converged it: its DynamoPoolRelay
// with the status the functions would write, its DGD, the six children as the API server returns
// them (test/live-children.ts), the Deployment's status with its pods Ready, and the EndpointSlice
// behind the Service. Each can be replaced, so a table case states only what it changes.
import { desiredChildren } from "../shared/apply-plan.ts";
import type { LabelSelector } from "../shared/api/label-selector.ts";
import { decide, decideAmong, type Decision } from "../shared/decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../shared/eligibility.ts";
import { SourceStore } from "../shared/source-store.ts";
import type { Seen } from "../shared/source-views.ts";
import { planStatus } from "../shared/status-plan.ts";
import { dgd, dpr } from "./builders.ts";
import { appliedHashes, LABELS, liveChildren } from "./live-children.ts";

export const settings = { ...DEFAULT_OPERATOR_DEFAULTS, relayCommand: ["python3", "-m", "dynamo.kv_dc_relay"] };
export const UID = "11111111-2222-3333-4444-555555555555";
export const READY_PODS = {
  observedGeneration: 1,
  replicas: 2,
  updatedReplicas: 2,
  readyReplicas: 2,
  availableReplicas: 2,
};

export const rolled = () => ({
  ...dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } }),
  metadata: { ...dgd().metadata, uid: "dgd-uid", resourceVersion: "90" },
});

export function endpointSlice(ready: boolean[], overrides: { name?: string; resourceVersion?: string } = {}) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: overrides.name ?? "g1-pool-relay-x7k2p",
      namespace: "team-a",
      uid: "slice-uid",
      resourceVersion: overrides.resourceVersion ?? "120",
      generation: 4,
      labels: {
        ...LABELS,
        "kubernetes.io/service-name": "g1-pool-relay",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name: "g1-pool-relay",
          uid: "00000006-aaaa-bbbb-cccc-dddddddddddd",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType: "IPv4",
    endpoints: ready.map((r, i) => ({
      addresses: [`10.244.0.${i + 10}`],
      conditions: { ready: r, serving: r, terminating: false },
      targetRef: { kind: "Pod", namespace: "team-a", name: `g1-pool-relay-5d9f-${i}` },
    })),
    ports: [{ name: "grpc", port: 5561, protocol: "TCP", appProtocol: "kubernetes.io/h2c" }],
  };
}

export interface ConvergedPair {
  decision: Extract<Decision, { action: "apply" }>;
  dpr: Seen;
  dgd: Seen;
  children: Record<"ServiceAccount" | "Role" | "RoleBinding" | "ConfigMap" | "Deployment" | "Service", Seen>;
  slice: Seen;
}

/**
 * The pair converged and Ready: the status is what a full run computes from these objects. With
 * `selecting`, its DynamoPoolRelay picks its DGDs by this selector among these DGDs of its namespace.
 */
export function convergedPair(selecting?: { selector: LabelSelector; dgds: Seen[] }): ConvergedPair {
  const d = dpr({ generation: 1, uid: UID, ...(selecting ? { spec: { dgdSelector: selecting.selector } } : {}) });
  const made = selecting ? decideAmong(d, selecting.dgds, settings) : decide(d, rolled(), settings);
  const decision = made as Extract<Decision, { action: "apply" }>;
  const children = liveChildren({
    dprUid: UID,
    clusterID: "dc-1",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision)),
    deploymentStatus: READY_PODS,
  });
  const slice = endpointSlice([true, true]);
  const observed = {
    serviceAccount: children.ServiceAccount,
    role: children.Role,
    roleBinding: children.RoleBinding,
    configMap: children.ConfigMap,
    deployment: children.Deployment as never,
    service: children.Service,
    endpointSlices: [slice],
  };
  const { status } = planStatus({ dpr: d, decision, observed, changed: [], now: "2026-02-01T00:00:00Z" });
  return {
    decision,
    dpr: { ...d, metadata: { ...d.metadata, resourceVersion: "99" }, status },
    dgd: rolled(),
    children: children as unknown as ConvergedPair["children"],
    slice: slice,
  };
}

/** Every object of the pair, its DynamoPoolRelay and DGD first, as the source lists them. */
export const objectsOf = (p: ConvergedPair): Seen[] => [p.dpr, p.dgd, ...Object.values(p.children), p.slice];

/** A store that has taken these objects, in this order, at time 0. */
export function storeOf(objects: readonly Seen[]): SourceStore {
  const store = new SourceStore(settings);
  for (const o of objects) store.take("add", o, 0);
  return store;
}
