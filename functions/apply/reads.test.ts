// apply's reads around its writes: a transient failure while creating the children unread ends the
// run (the Broker redelivers) instead of reading and writing on, and the EndpointSlices behind a
// Service that was there when read show in the status apply writes.
import { describe, expect, it } from "vitest";
import { desiredChildren } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { decide, type Decision } from "../../shared/decide.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { LABELS, appliedHashes, liveChildren } from "../../test/live-children.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Context } from "../runtime/handler.ts";
import { apply } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const config = parseConfig({});
const UID = "dpr-uid-reads";
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 4, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "c" },
} as unknown as KubeObject;
const dgd = {
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
} as unknown as KubeObject;
const reconcile = (): CloudEvent =>
  productEvent(
    EventType.Reconcile,
    { namespace: "team-a", name: "g1", cause: "DGDChanged" },
    { source: "/test", cause: "reads", time: NOW },
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

describe("apply", () => {
  it("ends the run on a transient failure while creating the children unread, reading no child", async () => {
    // A status that never showed children: they are created unread, each only if absent.
    const kube = new FakeKube([dpr, dgd]);
    let failed = false;
    kube.failWith = (call) =>
      call.op === "apply" && !call.options.dryRun && !failed
        ? ((failed = true), new ApiError(503, "ServiceUnavailable", "etcd is busy"))
        : undefined;
    await expect(apply(reconcile(), context(kube))).rejects.toMatchObject({ status: 503, message: "etcd is busy" });
    expect(kube.ops("get").map((c) => c.ref.kind)).toEqual(["DynamoPoolRelay", "DynamoGraphDeployment"]);
    expect(kube.ops("list")).toEqual([]);
    expect(kube.ops("replaceStatus")).toEqual([]);
  });

  it("shows the ready endpoints behind the Service it read in the status it writes", async () => {
    const decision = decide(dpr, dgd, config.defaults) as Extract<Decision, { action: "apply" }>;
    const live = liveChildren({
      dprUid: UID,
      clusterID: "c",
      connectionRevision: decision.connectionRevision,
      sourcesText: decision.sources.text,
      appliedHash: appliedHashes(desiredChildren(decision)),
    });
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "g1-pool-relay-a1b2c",
        namespace: "team-a",
        labels: { ...LABELS, "kubernetes.io/service-name": "g1-pool-relay" },
      },
      endpoints: [
        { addresses: ["10.0.0.7"], conditions: { ready: true } },
        { addresses: ["10.0.0.8"], conditions: { ready: true } },
      ],
    } as unknown as KubeObject;
    // Shown before: apply reads the children.
    const shown = { ...dpr, status: { sourcesRevision: "shown-before" } } as unknown as KubeObject;
    const kube = new FakeKube([shown, dgd, ...Object.values(live).map((o) => o as unknown as KubeObject), slice]);
    await apply(reconcile(), context(kube));
    const written = kube.ops("replaceStatus").at(-1)?.object["status"] as {
      conditions: { type: string; status: string; message: string }[];
    };
    expect(written.conditions.find((c) => c.type === "ListenerAvailable")).toMatchObject({
      status: "True",
      message: "2 ready Relay endpoints behind the Service",
    });
  });
});

// A DynamoPoolRelay with spec.dgdSelector: the DGDs it selects read in one LIST once it is read.
const selectorDpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "dpr-uid-1", generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "c", dgdSelector: { matchLabels: { pool: "a" } } },
};
const labelledDgd = (name: string, labels: Record<string, string>, namespace = "team-a"): KubeObject => ({
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name, namespace, labels },
  spec: { components: [{ name: "w", type: "worker" }] },
});
describe("apply for a DynamoPoolRelay with spec.dgdSelector", () => {
  it("lists the selected DGDs once and publishes the union of their worker namespaces", async () => {
    const kube = new FakeKube([
      selectorDpr,
      labelledDgd("a", { pool: "a" }),
      labelledDgd("b", { pool: "a" }),
      // Its own name, not selected; and a DGD of another namespace.
      labelledDgd("g1", { pool: "b" }),
      labelledDgd("c", { pool: "a" }, "team-b"),
    ]);
    const result = await apply(reconcile(), context(kube));
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
    const kube = new FakeKube([selectorDpr, labelledDgd("g1", { pool: "b" })]);
    const result = await apply(reconcile(), context(kube));
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
