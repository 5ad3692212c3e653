// The children other than the Deployment, whole, against what docs/design.md ("The rules, in plain
// words") promises: the Service, the ServiceAccount, Role and RoleBinding, and the sources
// ConfigMap. Every expected value is written out here, not read back from the renderer.
import { describe, expect, it } from "vitest";
import { dgd } from "../../test/builders.ts";
import { DISCOVERY, LABELS } from "../../test/live-children.ts";
import { decide } from "../decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../eligibility.ts";
import { renderChildren, type KubeObject } from "./index.ts";

const UID = "11111111-2222-3333-4444-555555555555";
/** See shared/render/deployment.test.ts: the independent vector for dc-1, relay:1, env A=1. */
const REVISION = "9a0830caf7e97b37ad127cede1aa4f49b170c4ae427dadf5a728957a0c40f920";

const rawDpr = (metadata: Record<string, unknown> = {}) => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 1, ...metadata },
  spec: { image: "relay:1", clusterID: "dc-1", env: [{ name: "A", value: "1" }] },
});

function children(metadata: Record<string, unknown> = {}, g = dgd()): KubeObject[] {
  const decision = decide(rawDpr(metadata), g, DEFAULT_OPERATOR_DEFAULTS);
  if (decision.action !== "apply") throw new Error(`expected an apply decision, got ${JSON.stringify(decision)}`);
  const objects = renderChildren(decision);
  expect(objects).toHaveLength(6);
  return objects;
}
function child(kind: string, objects = children()): KubeObject {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
}

const OWNER = [
  {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    name: "g1",
    uid: UID,
    controller: true,
    blockOwnerDeletion: true,
  },
];
const META = { name: "g1-pool-relay", namespace: "team-a", labels: LABELS, ownerReferences: OWNER };

describe("the Service", () => {
  it("is the ClusterIP Service <dgd>-pool-relay, labelled for Kubernetes discovery (its EndpointSlices inherit the labels)", () => {
    const svc = child("Service");
    expect(svc.apiVersion).toBe("v1");
    expect(svc.metadata).toEqual({
      ...META,
      labels: { ...LABELS, ...DISCOVERY },
    });
  });

  it("publishes Ready pods only, on port grpc 5561 speaking h2c, selecting the Relay pods by name and instance", () => {
    expect(child("Service")["spec"]).toEqual({
      type: "ClusterIP",
      selector: { "app.kubernetes.io/name": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" },
      publishNotReadyAddresses: false,
      ports: [{ name: "grpc", port: 5561, targetPort: "grpc", protocol: "TCP", appProtocol: "kubernetes.io/h2c" }],
    });
  });
});

describe("the Relay's identity and permissions", () => {
  it("is the ServiceAccount <dgd>-pool-relay, with nothing but metadata", () => {
    expect(child("ServiceAccount")).toEqual({ apiVersion: "v1", kind: "ServiceAccount", metadata: META });
  });

  it("grants what Pod-mode discovery calls and nothing more: its DynamoWorkerMetadatas and reading EndpointSlices", () => {
    expect(child("Role")).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: META,
      rules: [
        {
          apiGroups: ["nvidia.com"],
          resources: ["dynamoworkermetadatas"],
          verbs: ["get", "list", "watch", "create", "patch", "delete"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      ],
    });
  });

  it("binds that Role to that ServiceAccount only, both in the DynamoPoolRelay's namespace", () => {
    expect(child("RoleBinding")).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: META,
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "g1-pool-relay" },
      subjects: [{ kind: "ServiceAccount", name: "g1-pool-relay", namespace: "team-a" }],
    });
  });
});

describe("the sources ConfigMap", () => {
  it("is <dgd>-pool-relay holding exactly one key, sources.json, the canonical document with the connection revision", () => {
    expect(child("ConfigMap")).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: META,
      data: {
        "sources.json": `{"version":1,"connectionRevision":"${REVISION}","sources":[{"namespace":"team-a-g1"}]}`,
      },
    });
  });

  it("lists the worker namespaces of a DGD mid-rollout, sorted", () => {
    const data = child(
      "ConfigMap",
      children({}, dgd({ componentNames: { decode: ["g1-decode-e5f6a7b8", "g1-decode-a1b2c3d4"] } })),
    )["data"] as Record<string, string>;
    expect(data).toEqual({
      "sources.json": `{"version":1,"connectionRevision":"${REVISION}","sources":[{"namespace":"team-a-g1-a1b2c3d4"},{"namespace":"team-a-g1-e5f6a7b8"}]}`,
    });
  });
});

describe("every child", () => {
  it("is named <dgd>-pool-relay in the DynamoPoolRelay's namespace, for another name and namespace too", () => {
    const objects = children({ name: "llama", namespace: "inference" }, dgd({ name: "llama", namespace: "inference" }));
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      "ServiceAccount inference/llama-pool-relay",
      "Role inference/llama-pool-relay",
      "RoleBinding inference/llama-pool-relay",
      "ConfigMap inference/llama-pool-relay",
      "Deployment inference/llama-pool-relay",
      "Service inference/llama-pool-relay",
    ]);
    expect(child("RoleBinding", objects)["subjects"]).toEqual([
      { kind: "ServiceAccount", name: "llama-pool-relay", namespace: "inference" },
    ]);
    expect(child("RoleBinding", objects)["roleRef"]).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "llama-pool-relay",
    });
  });
});
