// Proof that the local control plane is a real one: server-side apply semantics, API defaulting
// without rollout loops, RBAC enforcement, and (profile full) controllers, scheduling, Ready pods,
// EndpointSlices and garbage collection.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apply } from "../../functions/apply/handler.ts";
import type { Context } from "../../functions/runtime/handler.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { decide } from "../../shared/decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "../../shared/eligibility.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { NO_STORED_VERSION } from "../../shared/apply-plan.ts";
import { renderChildren } from "../../shared/render/index.ts";
import { FAKE_NODE, startControlPlane, type ControlPlane } from "../../dev/control-plane/index.ts";
import { TEST_MANAGER, dgdObject, dprObject, eventually } from "./helpers.ts";

// A control plane of its own (profile full, no product installed): these tests apply the rendered
// children themselves, which the product on the shared control plane would also reconcile.
let cp: ControlPlane;
let client: KubeClient;
beforeAll(async () => {
  cp = await startControlPlane({ profile: "full", ownerPid: process.pid });
  client = cp.client;
});
afterAll(async () => {
  await cp?.stop();
});

async function freshNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(16).slice(2, 8)}`;
  await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, TEST_MANAGER);
  return name;
}

const ref = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
});

/** Creates a DynamoPoolRelay and its DGD, and renders the children for the live object (with its UID). */
async function renderedFor(ns: string, name: string, spec: Record<string, unknown> = {}) {
  await client.apply(dgdObject(ns, name), TEST_MANAGER);
  const dpr = await client.apply(dprObject(ns, name, spec), TEST_MANAGER);
  const decision = decide(dpr, await client.get(ref(dgdObject(ns, name))), DEFAULT_OPERATOR_DEFAULTS);
  if (decision.action !== "apply") throw new Error(`expected apply, got ${decision.action}`);
  return { dpr, children: renderChildren(decision) as KubeObject[] };
}

describe("server-side apply of the rendered objects", () => {
  it("writes nothing the second time: every resourceVersion and the Deployment's generation stay", async () => {
    const ns = await freshNamespace("ssa");
    // No pods, so once the Deployment controller has recorded the first generation nothing else
    // writes to these objects, and any change of resourceVersion would be our apply's.
    const { children } = await renderedFor(ns, "g1", { replicas: 0 });
    for (const obj of children) await client.apply(obj, TEST_MANAGER);
    const deployment = children.find((o) => o.kind === "Deployment")!;
    await eventually("the Deployment controller observed generation 1", async () => {
      const d = await client.get<{ status?: { observedGeneration?: number } }>(ref(deployment));
      return d?.status?.observedGeneration === 1;
    });
    const before = await Promise.all(children.map((o) => client.get<KubeObject>(ref(o))));
    const again = [];
    for (const obj of children) again.push(await client.apply(obj, TEST_MANAGER));
    expect(again.map((o) => o.metadata.resourceVersion)).toEqual(before.map((o) => o!.metadata.resourceVersion));
    // The API server defaulted many fields the render leaves out; applying again did not fight them.
    const live = (await client.get<{
      metadata: { generation: number };
      spec: { template: { spec: { dnsPolicy?: string; containers: { terminationMessagePath?: string }[] } } };
    }>(ref(deployment)))!;
    expect(live.metadata.generation).toBe(1);
    expect(live.spec.template.spec.dnsPolicy).toBe("ClusterFirst");
    expect(live.spec.template.spec.containers[0]?.terminationMessagePath).toBe("/dev/termination-log");
  });

  it("creates a missing object applied over resourceVersion 1, as the manager's Apply, and refuses one that exists, whoever's (409)", async () => {
    const ns = await freshNamespace("absent-only");
    const configMap = (name: string, data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: ns, resourceVersion: NO_STORED_VERSION },
      data,
    });
    const created = await client.apply<
      KubeObject & { metadata: { managedFields: { manager: string; operation: string }[] } }
    >(configMap("mine", { a: "1", b: "2" }), TEST_MANAGER);
    expect(created.metadata.resourceVersion).not.toBe(NO_STORED_VERSION);
    expect(created.metadata.managedFields.map((f) => [f.manager, f.operation])).toEqual([[TEST_MANAGER, "Apply"]]);
    // Owned as an Apply: a later apply that stops setting a field removes it.
    const { resourceVersion: _, ...unpinned } = configMap("mine", { a: "1" }).metadata;
    const dropped = await client.apply<{ data: Record<string, string> }>(
      { ...configMap("mine", { a: "1" }), metadata: unpinned },
      TEST_MANAGER,
      { force: true },
    );
    expect(dropped.data).toEqual({ a: "1" });
    // Present, as ours or as someone else's: refused, unchanged.
    await client.apply(
      { ...configMap("theirs", { t: "1" }), metadata: { name: "theirs", namespace: ns } },
      "someone-else",
    );
    for (const name of ["mine", "theirs"]) {
      const before = await client.get<KubeObject>({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name });
      const err = await client
        .apply(configMap(name, { x: "1" }), TEST_MANAGER, { force: true })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(409);
      expect(await client.get<KubeObject>({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name })).toEqual(
        before,
      );
    }
  });

  it("bumps the Deployment generation only when the pod template really changes", async () => {
    const ns = await freshNamespace("gen");
    const { children } = await renderedFor(ns, "g1");
    for (const obj of children) await client.apply(obj, TEST_MANAGER);
    const { children: changed } = await renderedFor(ns, "g1", { image: "relay:2" });
    const deployment = changed.find((o) => o.kind === "Deployment")!;
    const applied = await client.apply<{ metadata: { generation: number } }>(deployment, TEST_MANAGER);
    expect(applied.metadata.generation).toBe(2);
  });
});

describe("RBAC", () => {
  it("denies a ServiceAccount without permission and allows it once the rendered Role is bound", async () => {
    const ns = await freshNamespace("rbac");
    const { children } = await renderedFor(ns, "g1");
    const relay = client.as(`system:serviceaccount:${ns}:g1-pool-relay`);
    const slices = { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice" };
    const denied = await relay.list(slices.apiVersion, slices.kind, ns).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(ApiError);
    expect((denied as ApiError).status).toBe(403);
    for (const obj of children) await client.apply(obj, TEST_MANAGER);
    // RBAC caches refresh: a 403 until the binding is seen is expected, any other error is not.
    await eventually("the Role takes effect", () =>
      relay.list(slices.apiVersion, slices.kind, ns).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ApiError && e.status === 403) return false;
          throw e;
        },
      ),
    );
    // The Role grants exactly Pod-mode discovery: no Pods.
    const pods = await relay.list("v1", "Pod", ns).catch((e: unknown) => e);
    expect((pods as ApiError).status).toBe(403);
  });
});

describe("profile full", () => {
  it("runs 2 Ready Relay pods on the kwok node behind 2 ready endpoints, and garbage-collects them with the DynamoPoolRelay", async () => {
    const ns = await freshNamespace("full");
    const { dpr, children } = await renderedFor(ns, "g1");
    for (const obj of children) await client.apply(obj, TEST_MANAGER);

    const pods = await eventually("2 Relay pods are Ready", async () => {
      const list = await client.list<{
        spec: { nodeName?: string };
        status?: { conditions?: { type: string; status: string }[] };
      }>("v1", "Pod", ns, "app.kubernetes.io/instance=g1");
      const ready = list.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      return ready.length === 2 ? ready : undefined;
    });
    expect(pods.map((p) => p.spec.nodeName)).toEqual([FAKE_NODE, FAKE_NODE]);

    const endpoints = await eventually("the Service's EndpointSlices list 2 ready endpoints", async () => {
      const slices = await client.list<{ endpoints?: { conditions?: { ready?: boolean } }[] }>(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        ns,
        "kubernetes.io/service-name=g1-pool-relay",
      );
      const ready = slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true);
      return ready.length === 2 ? ready : undefined;
    });
    expect(endpoints).toHaveLength(2);

    expect(children.map((c) => c.kind)).toEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ConfigMap",
      "Deployment",
      "Service",
    ]);
    for (const child of children)
      expect(await client.get(ref(child))).toMatchObject({ kind: child.kind, metadata: { name: child.metadata.name } });
    await client.request("DELETE", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/${dpr.metadata.name}`);
    for (const child of children) {
      await eventually(
        `${child.kind} ${child.metadata.name} is garbage-collected`,
        async () => (await client.get(ref(child))) === undefined,
      );
    }
    await eventually(
      "the Relay pods are gone",
      async () => (await client.list("v1", "Pod", ns, "app.kubernetes.io/instance=g1")).length === 0,
    );
  });
});

/** A reconcile request for pair g1 of `ns`, and a context for apply over `kube`. */
const config = parseConfig({ DGD_API_VERSION: "nvidia.com/v1beta1" });
const reconcile = (ns: string) =>
  productEvent(
    EventType.Reconcile,
    { namespace: ns, name: "g1", cause: "DGDChanged" },
    { source: "/test", cause: randomUUID(), time: "2026-12-01T00:00:00Z" },
  );
const context = (kube: KubeClient): Context => ({
  kube,
  config,
  now: () => "2026-12-01T00:00:00Z",
  emit: async () => {},
  sleep: async () => {},
});

// The apply function run in this process against this file's control plane (no product installed
// here, so nothing else reconciles), with one API call intercepted to make the race happen at
// the worst moment.
describe("apply under races, on the real API server", () => {
  /** The client, except that `before(method, args)` runs first on the named method. */
  function intercepted<M extends "deleteExact" | "apply">(
    method: M,
    before: (...args: Parameters<KubeClient[M]>) => Promise<void>,
  ): KubeClient {
    return new Proxy(client, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (prop !== method)
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: unknown[]) => {
          await before(...(args as Parameters<KubeClient[M]>));
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
  }

  it("deletes only the Service it read: one re-created between its read and its delete survives, and the request is retried (409)", async () => {
    const ns = await freshNamespace("uid-race");
    const { children } = await renderedFor(ns, "g1");
    for (const obj of children) await client.apply(obj, TEST_MANAGER);
    const service = children.find((o) => o.kind === "Service")!;
    const before = (await client.get<KubeObject & { metadata: { uid: string } }>(ref(service)))!;
    await client.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    let recreated = "";
    const kube = intercepted("deleteExact", async () => {
      // Between the read and the delete: someone deletes the Service and creates their own.
      await client.deleteExact(ref(service), before.metadata.uid);
      const theirs = await client.create<{ metadata: { uid: string } }>({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: service.metadata.name, namespace: ns },
        spec: { ports: [{ port: 80 }] },
      });
      recreated = theirs.metadata.uid;
    });
    const err = await apply(reconcile(ns), context(kube)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).transient).toBe(true);
    expect((err as ApiError).message).toMatch(/the UID in the precondition \(.+\) does not match the UID in record/);
    expect(recreated).not.toBe("");
    const live = await client.get<{ metadata: { uid: string; ownerReferences?: unknown } }>(ref(service));
    expect(live?.metadata.uid).toBe(recreated);
    // The redelivery finds a foreign Service and leaves it.
    const again = await apply(reconcile(ns), context(client));
    expect(again.decision).toBe("Withdrawn");
    expect(again.fields).toMatchObject({ service: "notOwned" });
    expect((await client.get<{ metadata: { uid: string } }>(ref(service)))?.metadata.uid).toBe(recreated);
  });

  it("creates a new DynamoPoolRelay's children unread, only where absent: a ConfigMap someone created first is refused, then read and left alone", async () => {
    const ns = await freshNamespace("unread-race");
    await renderedFor(ns, "g1");
    const theirs = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "g1-pool-relay", namespace: ns },
      data: { "sources.json": '{"theirs":true}' },
    };
    const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "g1-pool-relay" };
    const kube = intercepted("apply", async (obj: KubeObject) => {
      if (obj.kind === "ConfigMap" && obj.metadata.resourceVersion === NO_STORED_VERSION)
        await client.apply(theirs, "someone-else");
    });
    const result = await apply(reconcile(ns), context(kube));
    expect(result.decision).toBe("Applied");
    expect(result.fields).toMatchObject({ childReads: "all" });
    // What the refused wave created, read back, is unchanged for the run that read it; the
    // RoleBinding, in the wave after it, was never sent until then.
    expect(result.reply?.data).toMatchObject({
      applied: ["RoleBinding"],
      unchanged: ["ServiceAccount", "Role"],
      skipped: [{ kind: "ConfigMap" }, { kind: "Deployment" }, { kind: "Service" }],
    });
    const live = await client.get<{
      data: Record<string, string>;
      metadata: { ownerReferences?: unknown; managedFields: { manager: string }[] };
    }>(ref);
    expect(live?.data).toEqual(theirs.data);
    expect(live?.metadata.ownerReferences).toBeUndefined();
    expect(live?.metadata.managedFields.map((f) => f.manager)).toEqual(["someone-else"]);
  });

  it("applies a missing child without force: a concurrent creator's object is neither taken over nor changed, and the request is retried (409)", async () => {
    const ns = await freshNamespace("create-race");
    const { dpr } = await renderedFor(ns, "g1");
    // A status that showed the Relay running: apply reads the children before it writes.
    await client.replaceStatus({ ...dpr, status: { replicas: 2 } });
    const theirs = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "g1-pool-relay", namespace: ns },
      data: { "sources.json": '{"theirs":true}' },
    };
    let created = false;
    const kube = intercepted("apply", async (obj: KubeObject) => {
      // Between the read (absent) and the apply: someone else creates the ConfigMap.
      if (obj.kind === "ConfigMap" && !created) {
        created = true;
        await client.apply(theirs, "someone-else");
      }
    });
    const err = await apply(reconcile(ns), context(kube)).catch((e: unknown) => e);
    expect(created).toBe(true);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(409);
    expect((err as ApiError).transient).toBe(true);
    expect((err as ApiError).message).toMatch(/conflict.*\.data\.sources\.json/i);
    const live = await client.get<{ data: Record<string, string>; metadata: { ownerReferences?: unknown } }>({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: ns,
      name: "g1-pool-relay",
    });
    expect(live?.data).toEqual(theirs.data);
    expect(live?.metadata.ownerReferences).toBeUndefined();
    // The redelivery sees a foreign ConfigMap: skipped, and nothing that needs it is applied; the
    // RoleBinding, in the wave after the refused one, is.
    const again = await apply(reconcile(ns), context(client));
    expect(again.decision).toBe("Applied");
    expect((again.reply?.data as { skipped: { kind: string }[] }).skipped.map((s) => s.kind)).toEqual([
      "ConfigMap",
      "Deployment",
      "Service",
    ]);
    expect((again.reply?.data as { applied: string[] }).applied).toEqual(["RoleBinding"]);
    expect(
      (
        await client.get<{ data: Record<string, string> }>({
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: ns,
          name: "g1-pool-relay",
        })
      )?.data,
    ).toEqual(theirs.data);
  });
});

describe("Knative Eventing's SinkBinding webhook", () => {
  // Knative's own configuration of it (knative.dev/pkg webhook/psbinding, exclusion mode, the
  // default): every Deployment write, status included, unless the object or its namespace carries
  // bindings.knative.dev/exclude=true, and failure policy Fail. Here it answers nothing, as an
  // eventing-webhook that is down, and only in this test's namespace.
  const EXCLUSION = {
    matchExpressions: [{ key: "bindings.knative.dev/exclude", operator: "NotIn", values: ["true"] }],
  };

  it("is never called for a Relay Deployment: apply creates one and the Deployment controller updates its status while the webhook is down", async () => {
    const ns = await freshNamespace("sinkbinding");
    const name = `poolrelay-test-sinkbindings-${ns}`;
    await client.apply(
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "MutatingWebhookConfiguration",
        metadata: { name },
        webhooks: [
          {
            name: "sinkbindings.webhook.sources.knative.dev",
            admissionReviewVersions: ["v1"],
            clientConfig: { url: "https://127.0.0.1:1/sinkbindings" },
            failurePolicy: "Fail",
            sideEffects: "None",
            timeoutSeconds: 10,
            rules: [
              {
                apiGroups: ["apps"],
                apiVersions: ["v1"],
                operations: ["CREATE", "UPDATE"],
                resources: ["deployments", "deployments/status"],
              },
            ],
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns }, ...EXCLUSION },
            objectSelector: EXCLUSION,
          },
        ],
      },
      TEST_MANAGER,
    );
    try {
      const { children } = await renderedFor(ns, "g1", { replicas: 0 });
      const deployment = children.find((o) => o.kind === "Deployment")!;
      // The webhook is in force: the same Deployment without the label is refused.
      const labels = { ...(deployment.metadata.labels as Record<string, string>) };
      expect(labels["bindings.knative.dev/exclude"]).toBe("true");
      delete labels["bindings.knative.dev/exclude"];
      await eventually("the webhook refuses a Deployment without the label", async () => {
        const err = await client
          .apply({ ...deployment, metadata: { ...deployment.metadata, name: "unlabelled", labels } }, TEST_MANAGER, {
            dryRun: true,
          })
          .catch((e: unknown) => e);
        return err instanceof ApiError && /sinkbindings\.webhook\.sources\.knative\.dev/.test(err.message);
      });
      const result = await apply(reconcile(ns), context(client));
      expect(result.decision).toBe("Applied");
      expect(result.reply?.data).toMatchObject({
        applied: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"],
      });
      await eventually("the Deployment controller wrote the Relay Deployment's status", async () => {
        const d = await client.get<{ status?: { observedGeneration?: number } }>(ref(deployment));
        return d?.status?.observedGeneration === 1;
      });
    } finally {
      await client.request("DELETE", `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`);
    }
  });
});
