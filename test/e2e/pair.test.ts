// One pair's life on the user's cluster, through its API server only: published with the real
// Relay Ready behind the Service, a DGD rollout reaching the ConfigMap without rolling the pods, the
// Service withdrawn with the DGD and back with it, the children gone with the DynamoPoolRelay.
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import type { KubeClient } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dgdObject, eventually } from "../integration/helpers.ts";
import { CHILD_REFS, children, condition, rollout, settledDpr } from "../integration/pipeline-helpers.ts";
import { createPair, e2eNamespace } from "./objects.ts";

let admin: KubeClient;
let ns: string;
beforeAll(async () => {
  admin = await adminClient();
  ns = await e2eNamespace(admin);
});

describe("a pair on the cluster KUBECONFIG names", () => {
  it("publishes the six children, owned by the DynamoPoolRelay, and goes Ready once two Relay pods are Ready", async () => {
    const created = await createPair(admin, ns, inject("relayImage"));
    const ready = await settledDpr(
      ns,
      "g1",
      "is Ready with both Relay pods ready",
      (d) => condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2,
      300_000,
    );
    const objs = await children(admin, ns);
    for (const [, kind] of CHILD_REFS) {
      expect(objs[kind], kind).toBeDefined();
      expect(objs[kind]!.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          kind: "DynamoPoolRelay",
          name: "g1",
          uid: created.metadata.uid,
          controller: true,
        }) as unknown,
      ]);
    }
    expect(ready.status?.["serviceEndpoint"]).toBe(`g1-pool-relay.${ns}.svc:5561`);
    expect(JSON.parse(objs["ConfigMap"]!.data["sources.json"]!)).toEqual({
      version: 1,
      connectionRevision: ready.status?.["connectionRevision"],
      sources: [{ namespace: `${ns}-g1` }],
    });
  });

  it("follows a DGD rollout in the ConfigMap without rolling the Relay pods", async () => {
    const before = await children(admin, ns);
    await rollout(ns, ["aaaa1111", "bbbb2222"]);
    const rolled = await settledDpr(
      ns,
      "g1",
      "lists both worker generations",
      (d) => d.status?.["workerNamespaces"]?.length === 2,
    );
    const after = await children(admin, ns);
    expect(rolled.status?.["workerNamespaces"]).toEqual([`${ns}-g1-aaaa1111`, `${ns}-g1-bbbb2222`]);
    expect(rolled.status?.["sourcesRevision"]).toBe(
      createHash("sha256").update(after["ConfigMap"]!.data["sources.json"]!, "utf8").digest("hex"),
    );
    expect(after["Deployment"]!.metadata.generation).toBe(before["Deployment"]!.metadata.generation);
    expect(condition(rolled, "Ready")?.status).toBe("True");
  });

  it("withdraws the Service when the DGD is deleted and publishes it again when the DGD is back", async () => {
    expect((await children(admin, ns))["Service"]).toBeDefined();
    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    const withdrawn = await settledDpr(
      ns,
      "g1",
      "is withdrawn",
      (d) => condition(d, "ServicePublished")?.reason === "Withdrawn",
    );
    expect((await children(admin, ns))["Service"]).toBeUndefined();
    expect(condition(withdrawn, "Eligible")).toMatchObject({ status: "False", reason: "DGDNotFound" });
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await settledDpr(ns, "g1", "is published again", (d) => condition(d, "ServicePublished")?.status === "True");
    expect((await children(admin, ns))["Service"]).toBeDefined();
  });

  it("garbage-collects every child when the DynamoPoolRelay is deleted", async () => {
    expect(Object.values(await children(admin, ns)).every((o) => o !== undefined)).toBe(true);
    await admin.request("DELETE", `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`);
    await eventually(
      "every child is gone",
      async () => Object.values(await children(admin, ns)).every((o) => o === undefined),
      120_000,
    );
  });
});
