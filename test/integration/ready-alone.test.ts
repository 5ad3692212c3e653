// The reference of npm run bench:pipeline (bench/pipeline-support.ts, readyAlone): the product's
// children applied with no product, timed until each pair is Ready as the product's status calls
// it. A reference that passed too early or hung would make the bench's ratio a wrong number.
import { beforeAll, describe, expect, it } from "vitest";
import { childrenAlone, readyAlone } from "../../bench/pipeline-support.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { childName } from "../../shared/names.ts";
import { readyEndpoints, type ObservedEndpointSlice } from "../../shared/status.ts";
import { TEST_MANAGER, adminClient, eventually, freshNamespace } from "./helpers.ts";

let admin: KubeClient;
beforeAll(async () => {
  admin = await adminClient();
});

/** The bench's children of a pair alone, selected by this test's namespace only. */
const childrenOf = (ns: string, name: string) => childrenAlone(ns, name, { "ready-alone": ns });

/** A Pod of the Deployment's template, as if made by hand. */
function barePod(deployment: KubeObject): KubeObject {
  const { template } = (
    deployment as unknown as { spec: { template: { metadata: { labels: Record<string, string> }; spec: unknown } } }
  ).spec;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${deployment.metadata.name}-bare`,
      namespace: deployment.metadata.namespace,
      labels: template.metadata.labels,
    },
    spec: template.spec,
  };
}

describe("readyAlone", () => {
  it("times each pair to a rolled-out Deployment with a ready endpoint, and stops once all are", async () => {
    const ns = await freshNamespace("alone");
    // Longer than the test may take: it passes only by stopping at the count.
    const alone = readyAlone(admin, `ready-alone=${ns}`, 2, 600_000);
    await alone.watching;
    for (const name of ["g1", "g2"]) for (const child of childrenOf(ns, name)) await admin.apply(child, TEST_MANAGER);
    const ready = await alone.ready;
    expect([...ready.keys()].sort()).toEqual([childName("g1"), childName("g2")]);
    // What it called Ready is there to be read.
    const deployment = await admin.get<{ status?: { readyReplicas?: number } }>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: ns,
      name: childName("g1"),
    });
    expect(deployment?.status?.readyReplicas).toBeGreaterThan(0);
  });

  it("answers with the pairs Ready so far when the time is up; Relay pods Ready with no Service, or a ready endpoint with no Deployment, are not", async () => {
    const ns = await freshNamespace("alone");
    const alone = readyAlone(admin, `ready-alone=${ns}`, 3, 20_000);
    await alone.watching;
    let answered = false;
    void alone.ready.then(
      () => (answered = true),
      () => (answered = true),
    );
    for (const child of childrenOf(ns, "g1")) await admin.apply(child, TEST_MANAGER);
    for (const child of childrenOf(ns, "g2").filter((c) => c.kind !== "Service"))
      await admin.apply(child, TEST_MANAGER);
    // g3's Service selects a Relay pod that no Deployment made: an endpoint, but nothing rolled out.
    for (const child of childrenOf(ns, "g3"))
      await admin.apply(child.kind === "Deployment" ? barePod(child) : child, TEST_MANAGER);
    await eventually(
      "g2's Relay pods Ready",
      async () => {
        const deployment = await admin.get<{ status?: { readyReplicas?: number } }>({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: ns,
          name: childName("g2"),
        });
        return (deployment?.status?.readyReplicas ?? 0) > 0;
      },
      15_000,
    );
    await eventually(
      "g3's bare pod a ready endpoint",
      async () => {
        const slices = await admin.list<ObservedEndpointSlice>(
          "discovery.k8s.io/v1",
          "EndpointSlice",
          ns,
          `kubernetes.io/service-name=${childName("g3")}`,
        );
        return readyEndpoints(slices) > 0;
      },
      15_000,
    );
    // Both turned Ready while the watch still ran, so leaving them out is readyAlone's own doing.
    expect(answered).toBe(false);
    expect([...(await alone.ready).keys()]).toEqual([childName("g1")]);
  });

  it("fails when the API server refuses its selector, before either watch is open", async () => {
    const alone = readyAlone(admin, "ready-alone in (", 1, 20_000);
    await expect(Promise.race([alone.watching, alone.ready])).rejects.toThrow(/400|selector/i);
  });
});
