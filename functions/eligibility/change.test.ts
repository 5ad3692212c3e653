// The change events of the eligibility handler (a DGD added, updated or deleted) with the
// in-memory adapter: which ones become a reconcile request, which are answered with none, and what
// they read.
import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../../test/builders.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { derivedId, EventType } from "../../shared/events.ts";
import type { KubeObject } from "../../shared/kube/client.ts";
import type { Context } from "../runtime/handler.ts";
import { eligibility } from "./handler.ts";

/** The source of eligibility's reconcile requests, as the events it emits name it (and their ids derive from it). */
const SOURCE = "/dynamo-pool-relay/eligibility";

const NOW = "2026-03-01T00:00:00Z";
const config = parseConfig({}, "eligibility");
const key = { namespace: "team-a", name: "g1" };
const context = (kube: FakeKube): Context => ({
  kube: kube.client,
  config,
  now: () => NOW,
  emit: async () => {
    throw new Error("a change event is answered by the reply, never emitted");
  },
  sleep: async () => {},
});

/** A change event as an ApiServerSource sends it, carrying the object. */
const change = (id: string, type: "add" | "update" | "delete", object: object): CloudEvent => ({
  specversion: "1.0",
  id,
  type: `dev.knative.apiserver.resource.${type}`,
  source: "https://10.96.0.1:443",
  time: NOW,
  datacontenttype: "application/json",
  extensions: {},
  data: object,
});
/** The DynamoPoolRelay g1, unreconciled (no status), being deleted when `deleting`. */
const relay = (deleting = false) => {
  const d = dpr();
  return {
    ...d,
    metadata: {
      ...d.metadata,
      ...(deleting ? { deletionTimestamp: "2026-02-28T23:59:00Z", finalizers: ["example.com/hold"] } : {}),
    },
  } as unknown as KubeObject;
};
const worker = () => dgd({ components: [{ name: "w", type: "worker" }] }) as unknown as KubeObject;

describe("a DGD change", () => {
  it("asks for a reconcile of the same-named DynamoPoolRelay whose status says nothing yet, after one read", async () => {
    const kube = new FakeKube([relay(), worker()]);
    const result = await eligibility(change("e1", "update", worker()), context(kube));
    expect(result).toMatchObject({ decision: "Reconcile", fields: { key } });
    expect(result.reply).toEqual({
      specversion: "1.0",
      id: derivedId(SOURCE, "e1", EventType.Reconcile, "team-a", "g1"),
      type: EventType.Reconcile,
      source: SOURCE,
      subject: "team-a/g1",
      time: NOW,
      datacontenttype: "application/json",
      extensions: {},
      data: { namespace: "team-a", name: "g1", cause: "DGDChanged" },
    });
    expect(kube.calls).toEqual([
      { op: "get", ref: { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", ...key } },
    ]);
  });

  it.each([
    { name: "no DynamoPoolRelay", objects: () => [worker()] },
    // Its children go with it (the garbage collector): a reconcile could only race the deletion.
    { name: "a DynamoPoolRelay that is being deleted", objects: () => [relay(true), worker()] },
  ])("asks for nothing when the DGD has $name", async ({ objects }) => {
    for (const type of ["add", "update", "delete"] as const) {
      const kube = new FakeKube(objects());
      const result = await eligibility(change(`e-${type}`, type, worker()), context(kube));
      expect(result).toEqual({ decision: "NoDynamoPoolRelay", fields: { key } });
      expect(kube.stats).toEqual({ reads: 1, writes: 0 });
    }
  });

  it("asks for nothing when the DynamoPoolRelay of its name picks its DGDs by label: the source asks for it", async () => {
    const picking = relay() as KubeObject & { spec: Record<string, unknown> };
    const kube = new FakeKube([{ ...picking, spec: { ...picking.spec, dgdSelector: { matchLabels: { pool: "a" } } } }]);
    const result = await eligibility(change("e-sel", "update", worker()), context(kube));
    expect(result).toEqual({ decision: "PicksByLabel", fields: { key } });
    expect(kube.stats).toEqual({ reads: 1, writes: 0 });
  });

  it("asks for nothing, and reads nothing, for a DGD whose name no DynamoPoolRelay can have", async () => {
    const kube = new FakeKube();
    const long = "d".repeat(60);
    const result = await eligibility(change("e2", "update", dgd({ name: long })), context(kube));
    expect(result).toEqual({
      decision: "NoDynamoPoolRelay",
      fields: { key: { namespace: "team-a", name: long }, why: "unpairable name" },
    });
    expect(kube.calls).toEqual([]);
  });
});

describe("a DynamoPoolRelay change", () => {
  it("is refused, unread, with 422: apply takes those itself (functions/apply/handler.test.ts)", async () => {
    const kube = new FakeKube([relay()]);
    await expect(eligibility(change("e3", "add", relay()), context(kube))).rejects.toMatchObject({
      name: "BadEvent",
      status: 422,
    });
    expect(kube.calls).toEqual([]);
  });
});
