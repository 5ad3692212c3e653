// Writes cases.json: what the TypeScript product decides, renders and computes as status for a
// set of inputs, for the Go port's parity test (bench/classic/port_test.go, which builds the same
// observed children for each scenario by name). Run from the repo root after a change to shared/:
// node bench/classic/testdata/generate.ts
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { APPLIED_HASH, desiredChildren, type LiveObject } from "../../../shared/apply-plan.ts";
import { parseConfig } from "../../../shared/config.ts";
import { decide } from "../../../shared/decide.ts";
import { planStatus } from "../../../shared/status-plan.ts";
import type { KubeObject } from "../../../shared/render/index.ts";

const NOW = "2026-03-01T12:00:00Z";
const UID = "0f6b2a4e-5c1d-4e8f-9a7b-3c2d1e0f9a8b";
const DEFAULTS = parseConfig({}).defaults;
const CUSTOM = parseConfig({ RELAY_COMMAND: '["/bin/relay","--x"]', DEFAULT_DISCOVERY_BACKEND: "etcd" }).defaults;

type Obj = Record<string, unknown>;
const dpr = (name: string, spec: Obj = {}, meta: Obj = {}, status?: Obj): Obj => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name, namespace: "ns1", uid: UID, generation: 3, resourceVersion: "42", ...meta },
  spec: { image: "relay:1", clusterID: "c1", replicas: 2, ...spec },
  ...(status ? { status } : {}),
});
const dgd = (
  name: string,
  spec: Obj = { components: [{ name: "decode", type: "decode" }] },
  meta: Obj = {},
  status?: Obj,
): Obj => ({
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: { name, namespace: "ns1", ...meta },
  spec,
  ...(status ? { status } : {}),
});

interface Case {
  name: string;
  dpr: Obj;
  dgd?: Obj;
  settings?: "custom";
}
const cases: Case[] = [
  { name: "plain", dpr: dpr("g1"), dgd: dgd("g1") },
  {
    name: "bench pair",
    dpr: dpr("g2", {
      resources: { requests: { cpu: "10m", memory: "16Mi" } },
      nodeSelector: { type: "kwok" },
      tolerations: [{ key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" }],
    }),
    dgd: dgd("g2"),
  },
  {
    name: "everything set",
    dpr: dpr("g3", {
      imagePullPolicy: "Always",
      replicas: 5,
      priorityClassName: "high",
      env: [
        { name: "A", value: "x <&> \u2028 é \u{1F600}" },
        { name: "B", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
      ],
      imagePullSecrets: [{ name: "pull" }],
      resources: { limits: { cpu: 2, memory: "4Gi" } },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: "a", operator: "In", values: ["b"] }] }],
          },
        },
      },
    }),
    dgd: dgd(
      "g3",
      {
        components: [
          { name: "Prefill", type: "prefill" },
          { name: "decode", type: "decode", globalDynamoNamespace: true },
          { name: "fe", type: "frontend" },
        ],
      },
      { annotations: { "nvidia.com/current-worker-hash": "abc123" } },
      { components: { Prefill: { componentNames: ["g3-prefill-def456", "g3-prefill", "g3-prefill-NOT"] } } },
    ),
  },
  {
    name: "empty lists",
    dpr: dpr("g4", { imagePullSecrets: [], tolerations: [], nodeSelector: {}, priorityClassName: "" }),
    dgd: dgd("g4"),
  },
  {
    name: "v1alpha1 services",
    dpr: dpr("g5"),
    dgd: {
      ...dgd("g5", {
        services: {
          w: { componentType: "worker", annotations: { "nvidia.com/dynamo-kube-discovery-mode": "pod" } },
          a: null,
          b: { componentType: "decode" },
        },
      }),
      apiVersion: "nvidia.com/v1alpha1",
    },
  },
  { name: "no DGD", dpr: dpr("g6") },
  { name: "DGD deleting", dpr: dpr("g7"), dgd: dgd("g7", undefined, { deletionTimestamp: "2026-01-01T00:00:00Z" }) },
  {
    name: "etcd backend",
    dpr: dpr("g8"),
    dgd: dgd("g8", undefined, { annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" } }),
  },
  {
    name: "unknown backend on a component",
    dpr: dpr("g9"),
    dgd: dgd("g9", {
      components: [
        {
          name: "w",
          type: "worker",
          podTemplate: { metadata: { annotations: { "nvidia.com/dynamo-discovery-backend": "zk" } } },
        },
      ],
    }),
  },
  {
    name: "container mode",
    dpr: dpr("g10"),
    dgd: dgd("g10", undefined, { annotations: { "nvidia.com/dynamo-kube-discovery-mode": "container" } }),
  },
  {
    name: "unknown mode",
    dpr: dpr("g11"),
    dgd: dgd("g11", undefined, { annotations: { "nvidia.com/dynamo-kube-discovery-mode": "x" } }),
  },
  {
    name: "no workers, operator default etcd",
    dpr: dpr("g12"),
    dgd: dgd("g12", { components: [] }),
    settings: "custom",
  },
  {
    name: "custom command",
    dpr: dpr("g13"),
    dgd: dgd("g13", undefined, { annotations: { "nvidia.com/dynamo-discovery-backend": "kubernetes" } }),
    settings: "custom",
  },
  { name: "dotted name", dpr: dpr("a.b"), dgd: dgd("a.b") },
  { name: "invalid DGD", dpr: dpr("g14"), dgd: dgd("g14", { components: [{ type: "decode" }] }) },
  { name: "reserved env", dpr: dpr("g15", { env: [{ name: "POD_NAME", value: "x" }] }) },
  { name: "bad image", dpr: dpr("g16", { image: "has space" }) },
  {
    name: "status carried",
    dpr: dpr(
      "g17",
      {},
      {},
      {
        observedGeneration: 5,
        conditions: [
          {
            type: "Ready",
            status: "False",
            observedGeneration: 3,
            lastTransitionTime: "2026-01-01T00:00:00Z",
            reason: "ApplyFailed",
            message: "refused earlier",
          },
        ],
        workerNamespaces: ["old"],
        sourcesRevision: "r0",
        connectionRevision: "c0",
      },
    ),
    dgd: dgd("g17"),
  },
];

/** The observed children of a scenario: the desired ones as if the API server stored them, with a Deployment status. */
function stored(desired: readonly KubeObject[], rv: number): Map<string, LiveObject> {
  return new Map(
    desired.map((d, i) => [
      d.kind,
      {
        ...structuredClone(d),
        metadata: { ...structuredClone(d.metadata), resourceVersion: String(rv + i), generation: 1 },
      },
    ]),
  );
}
const rolled = { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

const out = cases.map((c) => {
  const settings = c.settings === "custom" ? CUSTOM : DEFAULTS;
  const decision = decide(c.dpr, c.dgd, settings);
  const desired = decision.action === "apply" ? desiredChildren(decision) : [];
  const scenarios: {
    name: string;
    readyEndpoints: number;
    refused?: string;
    status: unknown;
    write: boolean;
    reflects: boolean;
  }[] = [];
  const run = (name: string, live: Map<string, LiveObject | undefined>, readyEndpoints: number, refused?: string) => {
    const slices = Array.from({ length: readyEndpoints }, () => ({ endpoints: [{ conditions: { ready: true } }] }));
    const get = (k: string) =>
      live.has(k)
        ? {
            [k === "ServiceAccount"
              ? "serviceAccount"
              : k === "RoleBinding"
                ? "roleBinding"
                : k.charAt(0).toLowerCase() + k.slice(1)]: live.get(k),
          }
        : {};
    const observed = {
      deployment: live.get("Deployment") as never,
      ...get("ServiceAccount"),
      ...get("Role"),
      ...get("RoleBinding"),
      ...get("ConfigMap"),
      ...get("Service"),
      endpointSlices: slices,
    };
    const failure = refused ? { uid: UID, generation: 3, message: refused } : undefined;
    const plan = planStatus({
      dpr: c.dpr as never,
      decision,
      observed,
      changed: [],
      now: NOW,
      ...(failure ? { failure: failure } : {}),
    });
    scenarios.push({
      name,
      readyEndpoints,
      ...(refused ? { refused } : {}),
      status: plan.status,
      write: plan.write,
      reflects: plan.reflects,
    });
  };
  if (decision.action === "apply") {
    const all = stored(desired, 100);
    const dep = all.get("Deployment")!;
    run("all current, rolled out, listening", new Map([...all, ["Deployment", { ...dep, status: rolled }]]), 2);
    run("all current, not rolled out", all, 0);
    run("none yet", new Map(desired.map((d) => [d.kind, undefined])), 0);
    run(
      "refused",
      new Map(desired.map((d) => [d.kind, undefined])),
      0,
      "PATCH /apis/apps/v1/namespaces/ns1/deployments/x: 422 bad",
    );
    const foreign = new Map(all);
    foreign.set("ServiceAccount", {
      ...all.get("ServiceAccount")!,
      metadata: { ...all.get("ServiceAccount")!.metadata, ownerReferences: [] },
    });
    foreign.set("Service", {
      ...all.get("Service")!,
      metadata: { ...all.get("Service")!.metadata, ownerReferences: [{ uid: "other", controller: true }] },
    });
    run("foreign ServiceAccount and Service", foreign, 0);
    const staleDep = new Map(all);
    staleDep.set("Deployment", { ...dep, spec: { ...(dep["spec"] as Obj), replicas: 7 } });
    run("stale Deployment", staleDep, 1);
    const otherQuantity = new Map(all);
    const d = structuredClone(dep) as unknown as Obj & {
      spec: { template: { spec: { containers: { resources: Obj }[] } } };
    };
    d.spec.template.spec.containers[0]!.resources = {
      requests: { cpu: "1000m", memory: "1024Mi" },
      limits: { memory: "4096Mi" },
    };
    otherQuantity.set("Deployment", { ...(d as unknown as LiveObject), status: rolled });
    run("quantities in another form", otherQuantity, 1);
  } else if (decision.action === "withdraw") {
    const svc = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "x-pool-relay", uid: "svc-uid", ownerReferences: [{ uid: UID, controller: true }] },
    } as unknown as LiveObject;
    run(
      "our Service still there",
      new Map([
        ["Deployment", undefined],
        ["Service", svc],
      ]),
      1,
    );
    run(
      "Service gone",
      new Map<string, LiveObject | undefined>([
        ["Deployment", undefined],
        ["Service", undefined],
      ]),
      0,
    );
  } else {
    run("rejected", new Map(), 0);
  }
  return {
    name: c.name,
    settings: c.settings ?? "default",
    dpr: c.dpr,
    dgd: c.dgd ?? null,
    decision: decision.action === "reject" ? decision : { ...decision, dpr: undefined },
    // The applied hash is the SHA-256 of the child as rendered: equal hashes, identical children.
    desired: desired.map((d) => [
      d.kind,
      (d.metadata as unknown as { annotations: Record<string, string> }).annotations[APPLIED_HASH],
    ]),
    scenarios,
  };
});

writeFileSync(fileURLToPath(new URL("cases.json", import.meta.url)), `${JSON.stringify({ now: NOW, cases: out })}\n`);
console.log(`${out.length} cases written`);
