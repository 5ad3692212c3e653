// The reconcile pipeline end to end on the real control plane: real HTTP, real CloudEvents, each
// function as its own ServiceAccount with the product RBAC and RBAC authorization on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../shared/kube/client.ts";
import { TEST_MANAGER, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { CHILD_REFS, childEvents, condition, dgdEvent, dgdRef, getDpr, resync, startHarness, type Harness } from "./pipeline-helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.pipeline.stop();
});


async function children(ns: string, name = "g1") {
  const out: Record<string, any> = {};
  for (const [apiVersion, kind] of CHILD_REFS) out[kind] = await h.admin.get({ apiVersion, kind, namespace: ns, name: `${name}-pool-relay` });
  return out;
}

async function published(ns: string, name = "g1", dgdAnnotations: Record<string, string> = {}) {
  await h.admin.apply(dgdObject(ns, name, dgdAnnotations), TEST_MANAGER);
  await h.admin.apply(dprObject(ns, name), TEST_MANAGER);
  await dgdEvent(h, ns, name, "ADDED");
}

/** A DGD rollout as the Dynamo operator reports it: old and new worker generations side by side. */
async function rollout(ns: string, hashes: string[]) {
  const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
  await h.admin.replaceStatus({ ...dgd, status: { components: { decode: { componentKind: "Deployment", componentNames: hashes.map((x) => `g1-decode-${x}`) } } } });
  await dgdEvent(h, ns, "g1");
}

describe("publish", () => {
  it("creates the six objects and reports Eligible, ServicePublished, the endpoint and observedGeneration", async () => {
    const ns = await freshNamespace("publish");
    await published(ns);
    const objs = await children(ns);
    for (const [, kind] of CHILD_REFS) {
      expect(objs[kind], kind).toBeDefined();
      expect(objs[kind].metadata.ownerReferences[0]).toMatchObject({ kind: "DynamoPoolRelay", name: "g1", controller: true });
      expect(objs[kind].metadata.managedFields.map((m: { manager: string }) => m.manager)).toContain("dynamo-pool-relay/apply");
    }
    const dpr = await getDpr(h, ns, "g1");
    expect(dpr.status?.["observedGeneration"]).toBe(1);
    expect(dpr.status?.["serviceEndpoint"]).toBe(`g1-pool-relay.${ns}.svc:5561`);
    expect(dpr.status?.["workerNamespaces"]).toEqual([`${ns}-g1`]);
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "True", reason: "Eligible" });
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "True", reason: "Published" });
    const doc = JSON.parse(objs["ConfigMap"].data["sources.json"]);
    expect(doc).toEqual({ version: 1, connectionRevision: dpr.status?.["connectionRevision"], sources: [{ namespace: `${ns}-g1` }] });
    const env = objs["Deployment"].spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: "DYN_RELAY_CONNECTION_REVISION", value: dpr.status?.["connectionRevision"] });
  });
});

describe("profile full", () => {
  it("goes Ready with 2 ready replicas once the two Relay pods are Ready behind the Service", async () => {
    const ns = await freshNamespace("ready");
    await published(ns);
    await eventually("2 ready endpoints behind the Service", async () => {
      const slices = await h.admin.list<{ endpoints?: { conditions?: { ready?: boolean } }[] }>("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=g1-pool-relay");
      return slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length === 2;
    });
    const dpr = await eventually("status is Ready", async () => {
      await childEvents(h, ns);
      const d = await getDpr(h, ns, "g1");
      return condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2 ? d : undefined;
    });
    expect(condition(dpr, "ListenerAvailable")).toMatchObject({ status: "True", reason: "EndpointsReady", message: "2 ready Relay endpoints behind the Service" });
    expect(dpr.status?.["replicas"]).toBe(2);
  });

  it("garbage-collects every child when the DynamoPoolRelay is deleted", async () => {
    const ns = await freshNamespace("gc");
    await published(ns);
    await h.admin.request("DELETE", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`);
    await eventually("every child is gone", async () => Object.values(await children(ns)).every((o) => o === undefined));
  });
});

describe("rollouts", () => {
  it("rewrites only the ConfigMap when worker namespaces change, without rolling the Relay pods", async () => {
    const ns = await freshNamespace("workers");
    await published(ns);
    const before = await children(ns);
    const statusBefore = (await getDpr(h, ns, "g1")).status!;
    await rollout(ns, ["aaaa1111", "bbbb2222"]);
    const after = await children(ns);
    expect(JSON.parse(after["ConfigMap"].data["sources.json"]).sources).toEqual([{ namespace: `${ns}-g1-aaaa1111` }, { namespace: `${ns}-g1-bbbb2222` }]);
    expect(after["Deployment"].metadata.generation).toBe(before["Deployment"].metadata.generation);
    expect(after["Deployment"].spec.template).toEqual(before["Deployment"].spec.template);
    const status = (await getDpr(h, ns, "g1")).status!;
    expect(status["sourcesRevision"]).not.toBe(statusBefore["sourcesRevision"]);
    expect(status["workerNamespaces"]).toEqual([`${ns}-g1-aaaa1111`, `${ns}-g1-bbbb2222`]);
    expect(status["connectionRevision"]).toBe(statusBefore["connectionRevision"]);
  });

  it.each([
    { name: "cluster ID", spec: { clusterID: "other-cluster" } },
    { name: "image", spec: { image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0" } },
    { name: "env", spec: { env: [{ name: "DYN_RELAY_EXPECTED_UNIQUE_BLOCKS", value: "2097152" }] } },
  ])("rolls the pods with a new connection revision in both places when the $name changes", async ({ spec }) => {
    const ns = await freshNamespace("connection");
    await published(ns);
    const before = (await getDpr(h, ns, "g1")).status!;
    await h.admin.apply(dprObject(ns, "g1", spec), TEST_MANAGER);
    await resync(h); // DynamoPoolRelay edits are found by the resync: generation 2 is not yet observed.
    const dpr = await getDpr(h, ns, "g1");
    expect(dpr.metadata.generation).toBe(2);
    expect(dpr.status?.["observedGeneration"]).toBe(2);
    const revision = dpr.status?.["connectionRevision"];
    expect(revision).not.toBe(before["connectionRevision"]);
    const objs = await children(ns);
    expect(JSON.parse(objs["ConfigMap"].data["sources.json"]).connectionRevision).toBe(revision);
    expect(objs["Deployment"].spec.template.spec.containers[0].env).toContainEqual({ name: "DYN_RELAY_CONNECTION_REVISION", value: revision });
    expect(objs["Deployment"].metadata.generation).toBe(2);
    await eventually("a second ReplicaSet rolls the pods", async () =>
      (await h.admin.list("apps/v1", "ReplicaSet", ns, "app.kubernetes.io/instance=g1")).length === 2);
  });
});

describe("withdrawal", () => {
  it("withdraws the Service when the DGD is deleted, says why, and republishes when it comes back", async () => {
    const ns = await freshNamespace("withdraw");
    await published(ns);
    const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
    await h.admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await dgdEvent(h, ns, "g1", "DELETED", dgd);
    expect((await children(ns))["Service"]).toBeUndefined();
    let dpr = await getDpr(h, ns, "g1");
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "False", reason: "DGDNotFound" });
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "False", reason: "Withdrawn" });
    expect(condition(dpr, "Ready")).toMatchObject({ status: "False", reason: "NotEligible" });
    expect(dpr.status?.["serviceEndpoint"]).toBeUndefined();

    await h.admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await dgdEvent(h, ns, "g1", "ADDED");
    expect((await children(ns))["Service"]).toBeDefined();
    dpr = await getDpr(h, ns, "g1");
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "True", reason: "Published" });
  });

  it.each<{ name: string; annotations: Record<string, string>; reason: string }>([
    { name: "etcd discovery", annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" }, reason: "DiscoveryBackendNotKubernetes" },
    { name: "container mode", annotations: { "nvidia.com/dynamo-kube-discovery-mode": "container" }, reason: "DiscoveryModeNotPod" },
  ])("withdraws the Service when the DGD switches to $name", async ({ annotations, reason }) => {
    const ns = await freshNamespace("switch");
    await published(ns);
    await h.admin.apply(dgdObject(ns, "g1", annotations), TEST_MANAGER);
    await dgdEvent(h, ns, "g1");
    expect((await children(ns))["Service"]).toBeUndefined();
    expect((await children(ns))["Deployment"]).toBeDefined();
    expect(condition(await getDpr(h, ns, "g1"), "Eligible")).toMatchObject({ status: "False", reason });
  });
});

describe("a foreign Service named <dgd>-pool-relay", () => {
  it("is never touched, also not on withdrawal, and is reported in status", async () => {
    const ns = await freshNamespace("foreign");
    const foreign = await h.admin.apply<KubeObject>(
      { apiVersion: "v1", kind: "Service", metadata: { name: "g1-pool-relay", namespace: ns }, spec: { ports: [{ port: 80 }], selector: { app: "someone-else" } } },
      "someone-else",
    );
    await published(ns);
    const service = (await children(ns))["Service"];
    expect(service.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
    expect(service.metadata.ownerReferences).toBeUndefined();
    const dpr = await getDpr(h, ns, "g1");
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "False", reason: "ServiceNotOwned" });
    expect(dpr.status?.["serviceEndpoint"]).toBeUndefined();

    const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
    await h.admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await dgdEvent(h, ns, "g1", "DELETED", dgd);
    expect((await children(ns))["Service"].metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
  });
});

describe("a spec the API server refuses", () => {
  it("writes no child and reports Ready=False ApplyFailed with the API server's message", async () => {
    const ns = await freshNamespace("refused");
    await h.admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    // Tolerations are opaque to the CRD: only the Deployment's own validation catches this.
    await h.admin.apply(dprObject(ns, "g1", { tolerations: [{ key: "gpu", operator: "Bogus" }] }), TEST_MANAGER);
    await dgdEvent(h, ns, "g1", "ADDED");
    expect(Object.values(await children(ns)).every((o) => o === undefined)).toBe(true);
    const dpr = await getDpr(h, ns, "g1");
    expect(condition(dpr, "Ready")).toMatchObject({ status: "False", reason: "ApplyFailed" });
    expect(condition(dpr, "Ready")?.message).toMatch(/the API server refused a child: .*tolerations\[0\]\.operator/);
    expect(dpr.status?.["observedGeneration"]).toBeUndefined();

    // Fixed spec: published, and the failure is gone.
    await h.admin.apply(dprObject(ns, "g1", { tolerations: [{ key: "gpu", operator: "Exists" }] }), TEST_MANAGER);
    await resync(h);
    const fixed = await getDpr(h, ns, "g1");
    expect(fixed.status?.["observedGeneration"]).toBe(2);
    expect(condition(fixed, "ServicePublished")).toMatchObject({ status: "True" });
    expect(condition(fixed, "Ready")?.reason).not.toBe("ApplyFailed");
  });
});
