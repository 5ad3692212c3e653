// The product end to end on the real Knative Eventing: objects change, the ApiServerSource and the
// DynamoPoolRelay watch send the events, the Broker's Triggers route them to the functions (run
// from their bundles as their ServiceAccounts, RBAC on), replies go back through the Broker.
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { appliedFor, invocations } from "./knative-helpers.ts";
import { CHILD_REFS, children, condition, getDpr, published, rollout, settledDpr } from "./pipeline-helpers.ts";

let admin: KubeClient;
beforeAll(async () => {
  admin = await adminClient();
});

describe("publish", () => {
  it("creates the six objects and reports Eligible, ServicePublished, the endpoint and observedGeneration", async () => {
    const ns = await freshNamespace("publish");
    const dpr = await published(ns);
    const objs = await children(admin, ns);
    for (const [, kind] of CHILD_REFS) {
      expect(objs[kind], kind).toBeDefined();
      expect(objs[kind]!.metadata.ownerReferences![0]).toMatchObject({
        kind: "DynamoPoolRelay",
        name: "g1",
        uid: dpr.metadata.uid,
        controller: true,
      });
      expect(objs[kind]!.metadata.managedFields!.map((m: { manager: string }) => m.manager)).toContain(
        "dynamo-pool-relay/apply",
      );
    }
    expect(dpr.status?.["observedGeneration"]).toBe(1);
    expect(dpr.status?.["serviceEndpoint"]).toBe(`g1-pool-relay.${ns}.svc:5561`);
    expect(dpr.status?.["workerNamespaces"]).toEqual([`${ns}-g1`]);
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "True", reason: "Eligible" });
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "True", reason: "Published" });
    // The revision the Relay reports as applied is the SHA-256 of the file it reads: the ConfigMap's bytes.
    expect(dpr.status?.["sourcesRevision"]).toBe(
      createHash("sha256").update(objs["ConfigMap"]!.data["sources.json"]!, "utf8").digest("hex"),
    );
    const doc = JSON.parse(objs["ConfigMap"]!.data["sources.json"]!) as unknown;
    expect(doc).toEqual({
      version: 1,
      connectionRevision: dpr.status?.["connectionRevision"],
      sources: [{ namespace: `${ns}-g1` }],
    });
    const env = objs["Deployment"]!.spec.template.spec.containers[0]!.env;
    expect(env).toContainEqual({ name: "DYN_RELAY_CONNECTION_REVISION", value: dpr.status?.["connectionRevision"] });
  });

  it("goes Ready with 2 ready replicas once the two Relay pods are Ready behind the Service (child events reach status)", async () => {
    const ns = await freshNamespace("ready");
    await published(ns);
    // The Deployment's status and the EndpointSlice change apart; each change is an event for status.
    const dpr = await settledDpr(
      ns,
      "g1",
      "is Ready with 2 ready replicas and 2 ready endpoints",
      (d) =>
        condition(d, "Ready")?.status === "True" &&
        d.status?.["readyReplicas"] === 2 &&
        condition(d, "ListenerAvailable")?.message.startsWith("2 ") === true,
    );
    expect(condition(dpr, "ListenerAvailable")).toMatchObject({
      status: "True",
      reason: "EndpointsReady",
      message: "2 ready Relay endpoints behind the Service",
    });
    expect(dpr.status?.["replicas"]).toBe(2);
    // The EndpointSlice's own events reach status too (any child event makes it re-read all of them).
    await eventually("status handled an event of this namespace's EndpointSlice", async () =>
      invocations("status").some((i) => i.event.subject?.includes(`/namespaces/${ns}/endpointslices/`)),
    );
  });

  it("picks up a DynamoPoolRelay created after its DGD from the DynamoPoolRelay's own event", async () => {
    const ns = await freshNamespace("dpr-event");
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await eventually("the DGD event was handled (no DynamoPoolRelay yet)", async () =>
      invocations("eligibility").some((i) => i.key?.namespace === ns && i.decision === "NoDynamoPoolRelay"),
    );
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    await settledDpr(ns, "g1", "is published", (d) => condition(d, "ServicePublished")?.status === "True");
    await appliedFor(ns, ["DPRChanged"]);
  });

  it("garbage-collects every child when the DynamoPoolRelay is deleted", async () => {
    const ns = await freshNamespace("gc");
    await published(ns);
    expect(Object.values(await children(admin, ns)).every((o) => o !== undefined)).toBe(true);
    await admin.request("DELETE", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`);
    await eventually("every child is gone", async () =>
      Object.values(await children(admin, ns)).every((o) => o === undefined),
    );
  });
});

describe("rollouts", () => {
  it("rewrites only the ConfigMap when worker namespaces change, without rolling the Relay pods", async () => {
    const ns = await freshNamespace("workers");
    const statusBefore = (await published(ns)).status!;
    const before = await children(admin, ns);
    await rollout(ns, ["aaaa1111", "bbbb2222"]);
    const dpr = await settledDpr(
      ns,
      "g1",
      "lists both worker generations",
      (d) => d.status?.["workerNamespaces"]?.length === 2,
    );
    const after = await children(admin, ns);
    expect((JSON.parse(after["ConfigMap"]!.data["sources.json"]!) as { sources: unknown }).sources).toEqual([
      { namespace: `${ns}-g1-aaaa1111` },
      { namespace: `${ns}-g1-bbbb2222` },
    ]);
    expect(after["Deployment"]!.metadata.generation).toBe(before["Deployment"]!.metadata.generation);
    expect(after["Deployment"]!.spec.template).toEqual(before["Deployment"]!.spec.template);
    expect(dpr.status!["sourcesRevision"]).not.toBe(statusBefore["sourcesRevision"]);
    expect(dpr.status!["sourcesRevision"]).toBe(
      createHash("sha256").update(after["ConfigMap"]!.data["sources.json"]!, "utf8").digest("hex"),
    );
    expect(dpr.status!["workerNamespaces"]).toEqual([`${ns}-g1-aaaa1111`, `${ns}-g1-bbbb2222`]);
    expect(dpr.status!["connectionRevision"]).toBe(statusBefore["connectionRevision"]);
  });

  it.each([
    { name: "cluster ID", spec: { clusterID: "other-cluster" } },
    { name: "image", spec: { image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0" } },
    { name: "env", spec: { env: [{ name: "DYN_RELAY_EXPECTED_UNIQUE_BLOCKS", value: "2097152" }] } },
  ])(
    "rolls the pods with a new connection revision in both places when the $name changes (a DynamoPoolRelay edit, no DGD event)",
    async ({ spec }) => {
      const ns = await freshNamespace("connection");
      const before = (await published(ns)).status!;
      await admin.apply(dprObject(ns, "g1", spec), TEST_MANAGER);
      const dpr = await settledDpr(ns, "g1", "observed generation 2", (d) => d.metadata.generation === 2);
      const revision = dpr.status?.["connectionRevision"];
      expect(revision).not.toBe(before["connectionRevision"]);
      const objs = await children(admin, ns);
      expect(
        (JSON.parse(objs["ConfigMap"]!.data["sources.json"]!) as { connectionRevision: unknown }).connectionRevision,
      ).toBe(revision);
      expect(objs["Deployment"]!.spec.template.spec.containers[0]!.env).toContainEqual({
        name: "DYN_RELAY_CONNECTION_REVISION",
        value: revision,
      });
      expect(objs["Deployment"]!.metadata.generation).toBe(2);
      await eventually(
        "a second ReplicaSet rolls the pods",
        async () => (await admin.list("apps/v1", "ReplicaSet", ns, "app.kubernetes.io/instance=g1")).length === 2,
      );
    },
  );
});

describe("withdrawal", () => {
  it("withdraws the Service when the DGD is deleted, says why, and republishes when it comes back", async () => {
    const ns = await freshNamespace("withdraw");
    await published(ns);
    expect((await children(admin, ns))["Service"]).toBeDefined();
    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    let dpr = await settledDpr(
      ns,
      "g1",
      "is withdrawn",
      (d) => condition(d, "ServicePublished")?.reason === "Withdrawn",
    );
    // Withdrawn is reported only once the Service is gone.
    expect((await children(admin, ns))["Service"]).toBeUndefined();
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "False", reason: "DGDNotFound" });
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "False", reason: "Withdrawn" });
    expect(condition(dpr, "Ready")).toMatchObject({ status: "False", reason: "NotEligible" });
    expect(dpr.status?.["serviceEndpoint"]).toBeUndefined();
    // The Relay keeps running, so the Service comes back at once with the DGD.
    expect((await children(admin, ns))["Deployment"]).toBeDefined();

    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    dpr = await settledDpr(ns, "g1", "is published again", (d) => condition(d, "ServicePublished")?.status === "True");
    expect((await children(admin, ns))["Service"]).toBeDefined();
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "True", reason: "Published" });
  });

  it.each<{ name: string; annotations: Record<string, string>; reason: string }>([
    {
      name: "etcd discovery",
      annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" },
      reason: "DiscoveryBackendNotKubernetes",
    },
    {
      name: "container mode",
      annotations: { "nvidia.com/dynamo-kube-discovery-mode": "container" },
      reason: "DiscoveryModeNotPod",
    },
  ])("withdraws the Service when the DGD switches to $name", async ({ annotations, reason }) => {
    const ns = await freshNamespace("switch");
    await published(ns);
    expect((await children(admin, ns))["Service"]).toBeDefined();
    await admin.apply(dgdObject(ns, "g1", annotations), TEST_MANAGER);
    const dpr = await settledDpr(
      ns,
      "g1",
      `is withdrawn, not eligible (${reason})`,
      (d) => condition(d, "Eligible")?.reason === reason && condition(d, "ServicePublished")?.reason === "Withdrawn",
    );
    expect((await children(admin, ns))["Service"]).toBeUndefined();
    expect((await children(admin, ns))["Deployment"]).toBeDefined();
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "False", reason });
  });
});

describe("someone else's edits to fields the product sets", () => {
  it("are reverted: the child's own event reaches status, which asks for a reconcile, which applies with force", async () => {
    const ns = await freshNamespace("revert");
    await published(ns);
    const before = await children(admin, ns);
    const path = (resource: string, group = "/api/v1") =>
      `${group}/namespaces/${ns}/${resource}/g1-pool-relay?fieldManager=someone-editing`;
    const merge = "application/merge-patch+json";
    // Presence first: the edits land. The Role first: Roles send no events (the ApiServerSource
    // does not watch them), so it is the reconcile the later edits cause that must put it back.
    const role = (await admin.request(
      "PATCH",
      path("roles", "/apis/rbac.authorization.k8s.io/v1"),
      { rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }] },
      merge,
    )) as { rules: unknown[] };
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }]);
    const dep = (await admin.request(
      "PATCH",
      path("deployments", "/apis/apps/v1"),
      { spec: { replicas: 5 } },
      merge,
    )) as { spec: { replicas: number } };
    expect(dep.spec.replicas).toBe(5);
    const cm = (await admin.request(
      "PATCH",
      path("configmaps"),
      { data: { "sources.json": '{"edited":true}' } },
      merge,
    )) as { data: Record<string, string> };
    expect(cm.data["sources.json"]).toBe('{"edited":true}');

    const after = await eventually("the Role, the Deployment and the ConfigMap are back", async () => {
      const now = await children(admin, ns);
      const back =
        now["ConfigMap"]!.data["sources.json"] === before["ConfigMap"]!.data["sources.json"] &&
        now["Deployment"]!.spec.replicas === 2 &&
        JSON.stringify(now["Role"]!.rules) === JSON.stringify(before["Role"]!.rules);
      return back ? now : undefined;
    });
    expect(after["Role"]!.rules).toEqual(before["Role"]!.rules);
    // Put back by the reconcile status's drift request asked for; or by a resync tick's, when the
    // pair's slot came round first (then status may have found nothing to ask for). A broken drift
    // path passes only in a run that a tick happens to land in.
    await appliedFor(ns, ["Drift", "Resync"]);
  });
});

describe("a foreign Service named <dgd>-pool-relay", () => {
  it("is never touched, also not on withdrawal, and is reported in status", async () => {
    const ns = await freshNamespace("foreign");
    const foreign = await admin.apply<KubeObject>(
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "g1-pool-relay", namespace: ns },
        spec: { ports: [{ port: 80 }], selector: { app: "someone-else" } },
      },
      "someone-else",
    );
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    const dpr = await settledDpr(
      ns,
      "g1",
      "reports the foreign Service",
      (d) => condition(d, "ServicePublished")?.reason === "ServiceNotOwned",
    );
    const service = (await children(admin, ns))["Service"]!;
    expect(service.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
    expect(service.metadata.ownerReferences).toBeUndefined();
    expect(condition(dpr, "ServicePublished")).toMatchObject({ status: "False", reason: "ServiceNotOwned" });
    expect(dpr.status?.["serviceEndpoint"]).toBeUndefined();

    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await settledDpr(ns, "g1", "is not eligible", (d) => condition(d, "Eligible")?.reason === "DGDNotFound");
    expect((await children(admin, ns))["Service"]!.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
  });
});

describe("a spec the API server refuses", () => {
  it("writes no child and reports Ready=False ApplyFailed with the API server's message, until the spec is fixed", async () => {
    const ns = await freshNamespace("refused");
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    // Tolerations are opaque to the CRD: only the Deployment's own validation catches this.
    await admin.apply(dprObject(ns, "g1", { tolerations: [{ key: "gpu", operator: "Bogus" }] }), TEST_MANAGER);
    const dpr = await eventually("Ready=False ApplyFailed", async () => {
      const d = await getDpr(admin, ns, "g1");
      return condition(d, "Ready")?.reason === "ApplyFailed" ? d : undefined;
    });
    expect(Object.values(await children(admin, ns)).every((o) => o === undefined)).toBe(true);
    expect(condition(dpr, "Ready")).toMatchObject({ status: "False", reason: "ApplyFailed" });
    expect(condition(dpr, "Ready")?.message).toMatch(/the API server refused a child: .*tolerations\[0\]\.operator/);
    expect(dpr.status?.["observedGeneration"]).toBeUndefined();

    // Fixed spec: the edit's own event publishes it, and the failure is gone.
    await admin.apply(dprObject(ns, "g1", { tolerations: [{ key: "gpu", operator: "Exists" }] }), TEST_MANAGER);
    const fixed = await settledDpr(
      ns,
      "g1",
      "is published at generation 2",
      (d) => d.metadata.generation === 2 && condition(d, "ServicePublished")?.status === "True",
    );
    expect(condition(fixed, "Ready")?.reason).not.toBe("ApplyFailed");
  });
});

describe("the DGD through the ApiServerSource", () => {
  it("reaches eligibility as the real adapter sends it: Resource mode, the API server as source, the guessed-plural subject", async () => {
    const ns = await freshNamespace("adapter");
    await published(ns);
    const dgdEvent = invocations("eligibility").find(
      (i) =>
        i.key?.namespace === ns &&
        i.event.type === "dev.knative.apiserver.resource.add" &&
        i.event.subject?.includes("/dynamographdeployments/"),
    );
    // The API server as the adapter's pod reaches it: the `kubernetes` Service.
    const kubernetes = await (
      await adminClient()
    ).get<{ spec: { clusterIP: string } }>({
      apiVersion: "v1",
      kind: "Service",
      namespace: "default",
      name: "kubernetes",
    });
    expect(dgdEvent?.event.source).toBe(`https://${kubernetes!.spec.clusterIP}:443`);
    expect(dgdEvent?.event.subject).toBe(`/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
  });
});
