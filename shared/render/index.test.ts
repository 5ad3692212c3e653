import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../../test/builders.ts";
import { decide, type Decision } from "../decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../eligibility.ts";
import { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { RESERVED_ENV } from "../relay-env.ts";
import type { renderConfigMap } from "./config-map.ts";
import type { renderDeployment } from "./deployment.ts";
import { renderChildren, CHILD_KINDS } from "./index.ts";
import type { renderRole } from "./role.ts";
import type { renderRoleBinding } from "./role-binding.ts";
import type { renderService } from "./service.ts";

type Apply = Extract<Decision, { action: "apply" }>;
function applyDecision(d = dpr(), g = dgd()): Apply {
  const decision = decide(d, g, DEFAULT_OPERATOR_DEFAULTS);
  if (decision.action !== "apply") throw new Error(`expected apply, got ${JSON.stringify(decision)}`);
  return decision;
}
/** Each kind as its renderer gives it, so that a case reaches the fields it is about. */
interface Rendered {
  ConfigMap: ReturnType<typeof renderConfigMap>;
  Deployment: ReturnType<typeof renderDeployment>;
  Service: ReturnType<typeof renderService>;
  Role: ReturnType<typeof renderRole>;
  RoleBinding: ReturnType<typeof renderRoleBinding>;
}
const byKind = <K extends keyof Rendered>(objects: ReturnType<typeof renderChildren>, kind: K) =>
  objects.find((o) => o.kind === kind)! as Rendered[K];
const podSpec = (objects: ReturnType<typeof renderChildren>) => byKind(objects, "Deployment").spec.template.spec;
const envOf = (objects: ReturnType<typeof renderChildren>) =>
  podSpec(objects).containers[0]!.env as { name: string; value?: string }[];

describe("renderChildren", () => {
  it("renders the six kinds, each after what it needs, all named <dgd>-pool-relay", () => {
    const objects = renderChildren(applyDecision());
    expect(objects.map((o) => o.kind)).toEqual([...CHILD_KINDS]);
    expect(new Set(objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`))).toEqual(
      new Set(["team-a/g1-pool-relay"]),
    );
  });

  it("gives every object the product labels and a controller reference to the DynamoPoolRelay", () => {
    const objects = renderChildren(applyDecision());
    expect(objects).toHaveLength(6);
    for (const obj of objects) {
      expect(obj.metadata.labels).toMatchObject({
        "app.kubernetes.io/name": "dynamo-pool-relay",
        "app.kubernetes.io/instance": "g1",
        "app.kubernetes.io/managed-by": "dynamo-pool-relay",
        "app.kubernetes.io/part-of": "dynamo",
      });
      expect(obj.metadata.ownerReferences).toEqual([
        {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          name: "g1",
          uid: "11111111-2222-3333-4444-555555555555",
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
  });

  it("leaves ownerReferences out when the DynamoPoolRelay has no UID (offline render)", () => {
    const d = dpr();
    delete d.metadata.uid;
    const objects = renderChildren(applyDecision(d));
    expect(objects).toHaveLength(6);
    for (const obj of objects) expect(obj.metadata).not.toHaveProperty("ownerReferences");
  });

  it("is deterministic: the same input renders byte-identical output", () => {
    expect(JSON.stringify(renderChildren(applyDecision()))).toBe(JSON.stringify(renderChildren(applyDecision())));
  });

  it("puts the canonical sources document in the ConfigMap and ties it to the pod template's connection revision", () => {
    const decision = applyDecision();
    const objects = renderChildren(decision);
    const text = byKind(objects, "ConfigMap").data["sources.json"];
    expect(text).toBe(decision.sources.text);
    expect(JSON.parse(text)).toEqual({
      version: 1,
      connectionRevision: decision.connectionRevision,
      sources: [{ namespace: "team-a-g1" }],
    });
    expect(envOf(objects)).toContainEqual({
      name: "DYN_RELAY_CONNECTION_REVISION",
      value: decision.connectionRevision,
    });
  });

  it("changes only the ConfigMap when worker namespaces change", () => {
    const before = renderChildren(
      applyDecision(dpr(), dgd({ annotations: { "nvidia.com/current-worker-hash-v2": "aaaa1111" } })),
    );
    const after = renderChildren(
      applyDecision(dpr(), dgd({ componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } })),
    );
    const changed = before.filter((o, i) => JSON.stringify(o) !== JSON.stringify(after[i])).map((o) => o.kind);
    expect(changed).toEqual(["ConfigMap"]);
  });

  it.each([
    { name: "cluster ID", spec: { clusterID: "dc-2" } },
    { name: "image", spec: { image: "relay:2" } },
    { name: "env", spec: { env: [{ name: "DYN_RELAY_EXPECTED_UNIQUE_BLOCKS", value: "10" }] } },
  ])("rolls the pods and rewrites the document when the $name changes", ({ spec }) => {
    const before = applyDecision();
    const after = applyDecision(dpr({ spec }));
    expect(after.connectionRevision).not.toBe(before.connectionRevision);
    expect(envOf(renderChildren(after))).toContainEqual({
      name: "DYN_RELAY_CONNECTION_REVISION",
      value: after.connectionRevision,
    });
    expect(after.sources.text).toContain(after.connectionRevision);
  });

  it("runs the configured Relay command; changing it rolls the pods and rewrites the document with the new revision", () => {
    const before = applyDecision();
    const after = decide(dpr(), dgd(), {
      ...DEFAULT_OPERATOR_DEFAULTS,
      relayCommand: ["python3", "-m", "dynamo.pool_relay"],
    });
    if (after.action !== "apply") throw new Error("expected apply");
    const objects = renderChildren(after);
    expect(podSpec(objects).containers[0]!.command).toEqual(["python3", "-m", "dynamo.pool_relay"]);
    expect(after.connectionRevision).not.toBe(before.connectionRevision);
    expect(envOf(objects)).toContainEqual({ name: "DYN_RELAY_CONNECTION_REVISION", value: after.connectionRevision });
    expect(
      (JSON.parse(byKind(objects, "ConfigMap").data["sources.json"]) as { connectionRevision: string })
        .connectionRevision,
    ).toBe(after.connectionRevision);
  });

  it("sets exactly the product env names, then the user's env in order", () => {
    const objects = renderChildren(
      applyDecision(
        dpr({
          spec: {
            env: [
              { name: "B", value: "2" },
              { name: "A", value: "$(POD_NAME)" },
            ],
          },
        }),
      ),
    );
    expect(envOf(objects).map((e) => e.name)).toEqual([
      "DYN_DC_ID",
      "DYN_RELAY_CONNECTION_REVISION",
      "DYN_DISCOVERY_BACKEND",
      "DYN_KUBE_DISCOVERY_MODE",
      "DYN_NAMESPACE",
      "DYN_SYSTEM_PORT",
      "POD_NAME",
      "POD_NAMESPACE",
      "POD_UID",
      "B",
      "A",
    ]);
  });

  // The names the README's API reference promises are rejected in spec.env, as it lists them.
  const README_RESERVED = [
    "DYN_DC_ID",
    "DYN_DISCOVERY_BACKEND",
    "DYN_KUBE_DISCOVERY_MODE",
    "DYN_NAMESPACE",
    "DYN_RELAY_BIND",
    "DYN_RELAY_CONNECTION_REVISION",
    "DYN_RELAY_ENDPOINT_PREFIXES",
    "DYN_RELAY_NAMESPACES",
    "DYN_RELAY_WATCH_ALL",
    "DYN_SYSTEM_PORT",
    "POD_NAME",
    "POD_NAMESPACE",
    "POD_UID",
  ];

  it("reserves exactly the env names the README lists, which the CRD's admission rule is built from", () => {
    expect(RESERVED_ENV).toEqual(README_RESERVED);
  });

  it.each(README_RESERVED)("rejects a spec.env that sets %s", (name) => {
    const parsed = DynamoPoolRelay.safeParse(
      dpr({
        spec: {
          env: [
            { name: "OK", value: "1" },
            { name, value: "x" },
          ],
        },
      }),
    );
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      `spec.env.1: the product sets ${name} itself; remove it from spec.env`,
    ]);
  });

  it("runs the Relay in file mode on gRPC 5561 with the cluster ID and a restricted security context", () => {
    const spec = podSpec(renderChildren(applyDecision()));
    const container = spec.containers[0]!;
    expect(container.args).toEqual(["--bind", "0.0.0.0:5561", "--sources-file", "/etc/pool-relay/sources.json"]);
    expect(container.env).toContainEqual({ name: "DYN_DC_ID", value: "dc-1" });
    expect(container.env).toContainEqual({
      name: "POD_UID",
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.uid" } },
    });
    expect(container.readinessProbe.grpc).toEqual({ port: 5561, service: "dynamo.kvrelay.v1.KvEventRelay" });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(container.volumeMounts).toEqual([{ name: "sources", mountPath: "/etc/pool-relay", readOnly: true }]);
  });

  it("takes replicas, pull secrets, resources and placement from the spec", () => {
    const d = dpr({
      spec: {
        replicas: 5,
        imagePullSecrets: [{ name: "ngc" }],
        resources: { requests: { cpu: "2" } },
        nodeSelector: { pool: "cpu" },
      },
    });
    const objects = renderChildren(applyDecision(d));
    expect(byKind(objects, "Deployment").spec.replicas).toBe(5);
    const spec = podSpec(objects);
    expect(spec.imagePullSecrets).toEqual([{ name: "ngc" }]);
    expect(spec.nodeSelector).toEqual({ pool: "cpu" });
    expect(spec.containers[0]!.resources).toEqual({ requests: { cpu: "2" } });
  });

  it("publishes only Ready pods on the gRPC port, with the discovery labels", () => {
    const svc = byKind(renderChildren(applyDecision()), "Service");
    expect(svc.spec).toMatchObject({
      type: "ClusterIP",
      publishNotReadyAddresses: false,
      selector: { "app.kubernetes.io/name": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" },
    });
    expect(svc.spec.ports).toEqual([
      { name: "grpc", port: 5561, targetPort: "grpc", protocol: "TCP", appProtocol: "kubernetes.io/h2c" },
    ]);
    expect(svc.metadata.labels).toMatchObject({
      "nvidia.com/dynamo-discovery-backend": "kubernetes",
      "nvidia.com/dynamo-discovery-enabled": "true",
    });
  });

  it("grants the Relay exactly what Pod-mode discovery needs", () => {
    const role = byKind(renderChildren(applyDecision()), "Role");
    expect(role.rules).toEqual([
      {
        apiGroups: ["nvidia.com"],
        resources: ["dynamoworkermetadatas"],
        verbs: ["get", "list", "watch", "create", "patch", "delete"],
      },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
    ]);
    const binding = byKind(renderChildren(applyDecision()), "RoleBinding");
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "g1-pool-relay", namespace: "team-a" }]);
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "g1-pool-relay" });
  });
});
