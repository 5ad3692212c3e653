// What a status run that read every child remembers of each kind it read: an event that then
// carries the ConfigMap, or an EndpointSlice, at the very version the run read costs no request
// (the Deployment's and the Service's cases are in handler.test.ts). And the reconcile request a
// run asks for when a child is off the decision, as it names itself.
import { describe, expect, it } from "vitest";
import { desiredChildren } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { decide, type Decision } from "../../shared/decide.ts";
import { derivedId, EventType, productEvent } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { LABELS, appliedHashes, liveChildren } from "../../test/live-children.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Context } from "../runtime/handler.ts";
import { status } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
const config = parseConfig({});
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: UID, generation: 1, resourceVersion: "7" },
  spec: { image: "relay:1", clusterID: "dc-1" },
  // As apply's first run leaves it before the children carry its decision: a child change before any
  // status is written awaits apply (shared/read-plan.ts), which the "before apply wrote" test shows.
  status: {
    conditions: [
      {
        type: "Ready",
        status: "False",
        reason: "Reconciling",
        message: "the children do not carry the decision yet",
        lastTransitionTime: "2026-03-01T00:00:00Z",
      },
    ],
  },
};
const dgd = {
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
};
const context = (kube: FakeKube): Context => ({
  kube: kube.client,
  config,
  now: () => NOW,
  emit: async () => {
    throw new Error("status never emits");
  },
  sleep: async () => {},
});
const slice = {
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: {
    name: "g1-pool-relay-x7k2p",
    namespace: "team-a",
    resourceVersion: "61",
    labels: { ...LABELS, "kubernetes.io/service-name": "g1-pool-relay" },
  },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.0.0.7"], conditions: { ready: true } }],
} as unknown as KubeObject;

/** The DynamoPoolRelay, its DGD, the six children carrying the decision and one ready EndpointSlice. */
function world(): { kube: FakeKube; configMap: KubeObject } {
  const decision = decide(dpr, dgd, config.defaults) as Extract<Decision, { action: "apply" }>;
  const live = liveChildren({
    dprUid: UID,
    clusterID: "dc-1",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision)),
    deploymentStatus: {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 1,
      availableReplicas: 1,
    },
  });
  // The ConfigMap labelled by hand since apply wrote it: its events are not apply's own writes (which await apply's report).
  const cm = live.ConfigMap as unknown as KubeObject & {
    metadata: { managedFields?: object[]; labels?: Record<string, string> };
  };
  const configMap = {
    ...cm,
    metadata: {
      ...cm.metadata,
      labels: { ...cm.metadata.labels, team: "a" },
      managedFields: [
        ...(cm.metadata.managedFields ?? []),
        {
          manager: "kubectl-label",
          operation: "Update",
          apiVersion: "v1",
          time: "2026-02-01T00:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:labels": { "f:team": {} } } },
        },
      ],
    },
  } as KubeObject;
  const children = Object.entries(live).map(([kind, o]) =>
    kind === "ConfigMap" ? configMap : (o as unknown as KubeObject),
  );
  return {
    kube: new FakeKube([dpr, dgd, ...children, slice]),
    configMap,
  };
}

const update = (object: KubeObject, id: string): CloudEvent => ({
  specversion: "1.0",
  id,
  source: "https://10.96.0.1:443",
  type: "dev.knative.apiserver.resource.update",
  time: NOW,
  datacontenttype: "application/json",
  extensions: {},
  data: object,
});
const applied = (): CloudEvent =>
  productEvent(
    EventType.Applied,
    { namespace: "team-a", name: "g1", uid: UID, generation: 1, applied: [], unchanged: [], skipped: [] },
    { source: "/test", cause: "seen-kinds", time: NOW },
  );

describe("after a run that read every child", () => {
  it.each([
    { kind: "ConfigMap", object: (w: ReturnType<typeof world>) => w.configMap },
    { kind: "EndpointSlice", object: () => slice },
  ])("an event carrying the $kind at the version the run read costs no request", async ({ kind, object }) => {
    const w = world();
    expect((await status(applied(), context(w.kube))).decision).toBe("StatusWritten");
    expect(w.kube.ops("get").map((c) => c.ref.kind)).toContain(kind === "ConfigMap" ? "ConfigMap" : "DynamoPoolRelay");
    w.kube.calls.length = 0;
    const result = await status(update(object(w), `${kind}-again`), context(w.kube));
    expect(result).toMatchObject({ decision: "Seen", fields: { version: { kind } } });
    expect(w.kube.calls).toEqual([]);
  });
});

describe("a child off the decision", () => {
  it("gets a reconcile request from status, with status's own source and an id derived from the event", async () => {
    const w = world();
    const deployment = w.kube.stored("Deployment")!;
    await w.kube.deleteExact(
      { apiVersion: "apps/v1", kind: "Deployment", namespace: "team-a", name: "g1-pool-relay" },
      "x",
    );
    const event: CloudEvent = {
      specversion: "1.0",
      id: "deployment-gone",
      source: "https://10.96.0.1:443",
      type: "dev.knative.apiserver.resource.delete",
      time: NOW,
      datacontenttype: "application/json",
      extensions: {},
      data: deployment,
    };
    const result = await status(event, context(w.kube));
    expect(result.reply).toEqual({
      specversion: "1.0",
      id: derivedId("/dynamo-pool-relay/status", "deployment-gone", EventType.Reconcile, "team-a", "g1"),
      type: EventType.Reconcile,
      source: "/dynamo-pool-relay/status",
      subject: "team-a/g1",
      time: NOW,
      datacontenttype: "application/json",
      extensions: {},
      data: { namespace: "team-a", name: "g1", cause: "Drift" },
    });
  });
});
