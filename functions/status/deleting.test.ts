// status for a DynamoPoolRelay that is being deleted (deletionTimestamp set, finalizers holding it):
// its children go with it (the garbage collector), so a child event or apply's report ends at the
// first read, with no status written over the object being deleted.
import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import { LABELS } from "../../test/live-children.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Context } from "../runtime/handler.ts";
import { status } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
const config = parseConfig({});
const going = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: {
    name: "g1",
    namespace: "deleting",
    uid: UID,
    generation: 2,
    resourceVersion: "7",
    deletionTimestamp: "2026-02-28T23:59:00Z",
    finalizers: ["example.com/hold"],
  },
  spec: { image: "relay:1", clusterID: "dc-1" },
} as unknown as KubeObject;
const dgd = {
  apiVersion: config.dgdApiVersion,
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "deleting" },
  spec: { components: [{ name: "w", type: "worker" }] },
} as unknown as KubeObject;
const context = (kube: FakeKube): Context => ({
  kube: kube.client,
  config,
  now: () => NOW,
  emit: async () => {
    throw new Error("status never emits");
  },
  sleep: async () => {},
});

const applied = (): CloudEvent =>
  productEvent(
    EventType.Applied,
    { namespace: "deleting", name: "g1", uid: UID, generation: 2, applied: [], unchanged: [], skipped: [] },
    { source: "/test", cause: "a-deleting", time: NOW },
  );
const serviceDeleted = (): CloudEvent => ({
  specversion: "1.0",
  id: "svc-deleted",
  source: "https://10.96.0.1:443",
  type: "dev.knative.apiserver.resource.delete",
  time: NOW,
  datacontenttype: "application/json",
  extensions: {},
  data: {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "g1-pool-relay", namespace: "deleting", labels: LABELS },
  },
});

describe("status for a DynamoPoolRelay being deleted", () => {
  it.each([
    { name: "apply's report", event: applied },
    { name: "its Service's deletion by the garbage collector", event: serviceDeleted },
  ])("ends $name at the first read, writing nothing", async ({ event }) => {
    const kube = new FakeKube([going, dgd]);
    const result = await status(event(), context(kube));
    expect(result).toEqual({ decision: "Gone", fields: { key: { namespace: "deleting", name: "g1" } } });
    expect(kube.calls).toEqual([
      {
        op: "get",
        ref: { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: "deleting", name: "g1" },
      },
    ]);
  });
});
