// apply for a DynamoPoolRelay with spec.dgdSelector: the DGDs it selects read in one LIST once the
// DynamoPoolRelay is read, the union of their worker namespaces in the sources document, the
// selection in the status it shows.
import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Context } from "../runtime/handler.ts";
import { apply } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const config = parseConfig({});
const selector = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "dpr-uid-1", generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "c", dgdSelector: { matchLabels: { pool: "a" } } },
};
const dgd = (name: string, labels: Record<string, string>, namespace = "team-a"): KubeObject => ({
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name, namespace, labels },
  spec: { components: [{ name: "w", type: "worker" }] },
});
const reconcile: CloudEvent = productEvent(
  EventType.Reconcile,
  { namespace: "team-a", name: "g1", cause: "DGDChanged" },
  { source: "/test", cause: "r1", time: NOW },
);
const context = (kube: FakeKube): Context => ({
  kube: kube.client,
  config,
  now: () => NOW,
  emit: async () => {
    throw new Error("apply never emits");
  },
  sleep: async () => {},
});

describe("apply for a DynamoPoolRelay with spec.dgdSelector", () => {
  it("lists the selected DGDs once and publishes the union of their worker namespaces", async () => {
    const kube = new FakeKube([
      selector,
      dgd("a", { pool: "a" }),
      dgd("b", { pool: "a" }),
      // Its own name, not selected; and a DGD of another namespace.
      dgd("g1", { pool: "b" }),
      dgd("c", { pool: "a" }, "team-b"),
    ]);
    const result = await apply(reconcile, context(kube));
    expect(result.reply?.type).toBe(EventType.Applied);
    expect(kube.ops("list")).toEqual([
      {
        op: "list",
        apiVersion: config.dgdApiVersion,
        kind: "DynamoGraphDeployment",
        namespace: "team-a",
        labelSelector: "pool=a",
      },
    ]);
    const configMap = kube.ops("apply").find((c) => c.object.kind === "ConfigMap" && !c.options.dryRun)!.object;
    expect(JSON.parse((configMap as unknown as { data: Record<string, string> }).data["sources.json"]!)).toMatchObject({
      sources: [{ namespace: "team-a-a" }, { namespace: "team-a-b" }],
    });
    const [written] = kube.ops("replaceStatus");
    expect(written?.object).toMatchObject({
      status: { selectedDGDs: 2, eligibleDGDs: 2, workerNamespaces: ["team-a-a", "team-a-b"] },
    });
  });

  it("withdraws when the selector matches no DGD, saying so", async () => {
    const kube = new FakeKube([selector, dgd("g1", { pool: "b" })]);
    const result = await apply(reconcile, context(kube));
    expect(result.reply?.type).toBe(EventType.Withdrawn);
    const [written] = kube.ops("replaceStatus");
    expect(written?.object).toMatchObject({
      status: {
        selectedDGDs: 0,
        eligibleDGDs: 0,
        conditions: expect.arrayContaining([
          expect.objectContaining({ type: "Eligible", status: "False", reason: "NoDGDSelected" }),
        ]) as unknown,
      },
    });
  });
});
