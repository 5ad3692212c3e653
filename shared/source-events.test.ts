import { describe, expect, it } from "vitest";
import {
  COVERS,
  awaitsFirstStatus,
  changeEvent,
  coversOf,
  holdMs,
  laneOf,
  merged,
  queueKey,
  requeueKey,
  sent,
  sentFacts,
  type Watched,
} from "./source-events.ts";

const obj = (name: string, resourceVersion: string, uid = `uid-${name}`, kind = "Deployment"): Watched => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name, namespace: "n", uid, resourceVersion },
});
describe("sent: the changes the source leaves unsent", () => {
  it.each([
    { change: "add", kind: "ConfigMap", expected: false },
    { change: "add", kind: "Deployment", expected: false },
    { change: "add", kind: "Service", expected: false },
    { change: "add", kind: "EndpointSlice", expected: true },
    { change: "update", kind: "Deployment", expected: true },
    { change: "update", kind: "Service", expected: true },
    { change: "update", kind: "ConfigMap", expected: true },
    { change: "update", kind: "EndpointSlice", expected: true },
    { change: "delete", kind: "Deployment", expected: true },
    { change: "delete", kind: "Service", expected: true },
    { change: "delete", kind: "EndpointSlice", expected: true },
    // Watched for the requeue's judgment alone: status's Trigger takes none of theirs.
    { change: "update", kind: "ServiceAccount", expected: false },
    { change: "delete", kind: "Role", expected: false },
    { change: "delete", kind: "RoleBinding", expected: false },
  ] as const)("$change of a $kind: $expected", ({ change, kind, expected }) => {
    expect(sent(change, obj("a", "1", "u", kind))).toBe(expected);
  });

  const dpr = (generation: number, observedGeneration?: number, deleting = false) => ({
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: {
      name: "g1",
      namespace: "n",
      generation,
      ...(deleting ? { deletionTimestamp: "2026-12-06T00:00:00Z" } : {}),
    },
    ...(observedGeneration === undefined ? {} : { status: { observedGeneration } }),
  });
  it.each([
    { name: "an add of a new one", change: "add", now: dpr(1), before: undefined, expected: true },
    { name: "an update to a new generation", change: "update", now: dpr(2, 1), before: dpr(1, 1), expected: true },
    {
      name: "an update of one the source had not seen (it started after)",
      change: "update",
      now: dpr(2, 1),
      before: undefined,
      expected: true,
    },
    {
      name: "a status write, the generation unobserved and unchanged (its event was sent)",
      change: "update",
      now: dpr(1, undefined),
      before: dpr(1),
      expected: false,
    },
    {
      name: "a status write that observes the generation",
      change: "update",
      now: dpr(2, 2),
      before: dpr(2, 1),
      expected: false,
    },
    {
      name: "an add of one already observed (restored with its status)",
      change: "add",
      now: dpr(3, 3),
      before: undefined,
      expected: false,
    },
    {
      name: "a new generation someone's status write already observed (seen together by a relist)",
      change: "update",
      now: dpr(3, 3),
      before: dpr(2, 2),
      expected: false,
    },
    { name: "a delete", change: "delete", now: dpr(2, 1), before: dpr(2, 1), expected: false },
    {
      name: "an update that starts its deletion",
      change: "update",
      now: dpr(2, 1, true),
      before: dpr(1, 1),
      expected: false,
    },
  ] as const)("of a DynamoPoolRelay, $name: $expected", ({ change, now, before, expected }) => {
    expect(sent(change, now, before && sentFacts(before))).toBe(expected);
  });
});

describe("sent: a child's update that changes nothing status reads of it", () => {
  const deployment = (resourceVersion: string, status: Record<string, unknown>, replicas = 2) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "g1-pool-relay", namespace: "n", uid: "u", resourceVersion, generation: replicas === 2 ? 1 : 2 },
    spec: { replicas },
    status,
  });
  const slice = (resourceVersion: string, ready: boolean[], uid = "s") => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "g1-pool-relay-abcde",
      namespace: "n",
      uid,
      resourceVersion,
      generation: Number(resourceVersion),
    },
    endpoints: ready.map((r, i) => ({ addresses: [`10.0.0.${i}`], conditions: { ready: r } })),
  });
  const counting = { replicas: 2, updatedReplicas: 2, observedGeneration: 1 };
  it.each([
    {
      name: "a Deployment's ready replicas",
      before: deployment("1", counting),
      now: deployment("2", { ...counting, readyReplicas: 1 }),
      expected: true,
    },
    {
      name: "a Deployment's spec (a hand edit)",
      before: deployment("1", counting),
      now: deployment("2", counting, 0),
      expected: true,
    },
    {
      name: "a Deployment's conditions alone",
      before: deployment("1", counting),
      now: deployment("2", { ...counting, conditions: [{ type: "Progressing", status: "True" }] }),
      expected: false,
    },
    {
      name: "a Deployment's observedGeneration alone",
      before: deployment("1", counting),
      now: deployment("2", { ...counting, observedGeneration: 2 }),
      expected: false,
    },
    {
      name: "an EndpointSlice's endpoint turning ready",
      before: slice("1", [false, false]),
      now: slice("2", [true, false]),
      expected: true,
    },
    {
      name: "an EndpointSlice's endpoints added, none ready",
      before: slice("1", []),
      now: slice("2", [false, false]),
      expected: false,
    },
    {
      name: "an EndpointSlice re-created under its name (a relist's update)",
      before: slice("1", [true]),
      now: slice("2", [true], "other"),
      expected: true,
    },
    {
      name: "one the source had not seen before (it started after)",
      before: undefined,
      now: deployment("2", counting),
      expected: true,
    },
  ])("$name: $expected", ({ before, now, expected }) => {
    expect(sent("update", now, before && sentFacts(before))).toBe(expected);
  });

  it("sends a child's delete even when nothing of it changed", () => {
    const d = deployment("1", counting);
    expect(sent("delete", d, sentFacts(d))).toBe(true);
  });
});

describe("queueKey and merged: one event for a pair's Deployment and EndpointSlices", () => {
  const ctx = { source: "https://api", plural: "things", time: "2026-12-06T00:00:00Z" };
  const ev = (kind: string, name: string, rv: string, change: "add" | "update" | "delete" = "update") =>
    changeEvent(change, obj(name, rv, `uid-${name}`, kind), ctx);
  const deployment = (rv: string) => ev("Deployment", "g1-pool-relay", rv);
  const slice = (name: string, rv: string, change: "add" | "update" | "delete" = "update") =>
    ev("EndpointSlice", name, rv, change);

  it.each([
    { kind: "Deployment", expected: "children/n/g1" },
    { kind: "EndpointSlice", expected: "children/n/g1" },
    { kind: "Service", expected: "Service/n/a" },
    { kind: "ConfigMap", expected: "ConfigMap/n/a" },
    { kind: "DynamoPoolRelay", expected: "DynamoPoolRelay/n/a" },
  ])("$kind: $expected", ({ kind, expected }) => {
    expect(queueKey(kind, obj("a", "1", "u", kind), "n/g1")).toBe(expected);
  });

  it.each([
    {
      name: "a Deployment's update after another Deployment update: the newer",
      pending: deployment("6"),
      next: deployment("9"),
      kept: "update Deployment@9",
      covers: [],
    },
    {
      name: "an EndpointSlice's update after a Deployment's: the slice's, covering the Deployment",
      pending: deployment("6"),
      next: slice("s-1", "7"),
      kept: "update EndpointSlice@7",
      covers: ["Deployment/g1-pool-relay@6"],
    },
    {
      name: "a Deployment's update after an EndpointSlice's add: still the add, covering the Deployment",
      pending: slice("s-1", "5", "add"),
      next: deployment("6"),
      kept: "add EndpointSlice@5",
      covers: ["Deployment/g1-pool-relay@6"],
    },
    {
      name: "an EndpointSlice's update after its own add: an add of the newer object",
      pending: slice("s-1", "5", "add"),
      next: slice("s-1", "7"),
      kept: "add EndpointSlice@7",
      covers: [],
    },
    {
      name: "an EndpointSlice's delete after its own add: the delete",
      pending: slice("s-1", "5", "add"),
      next: slice("s-1", "7", "delete"),
      kept: "delete EndpointSlice@7",
      covers: [],
    },
    {
      name: "two EndpointSlices' adds: the newer, covering the other",
      pending: slice("s-1", "5", "add"),
      next: slice("s-2", "8", "add"),
      kept: "add EndpointSlice@8",
      covers: ["EndpointSlice/s-1@5"],
    },
  ])("$name", ({ pending, next, kept, covers }) => {
    const one = merged(pending, next);
    expect(
      `${one.type.split(".").at(-1)} ${one.extensions["kind"]}@${(one.data as Watched).metadata.resourceVersion}`,
    ).toBe(kept);
    expect(coversOf(one)).toEqual(covers);
    // Another event than either, unless it is one of them as it was.
    expect(one.id === next.id).toBe(covers.length === 0 && one.type === next.type);
    expect(one.id).not.toBe(pending.id);
  });

  it("keeps the newest version of each covered object, and never the carried one itself", () => {
    let one = merged(slice("s-1", "5", "add"), deployment("6"));
    one = merged(one, deployment("7"));
    one = merged(one, slice("s-2", "8"));
    expect(
      `${one.type.split(".").at(-1)} ${one.extensions["kind"]}@${(one.data as Watched).metadata.resourceVersion}`,
    ).toBe("add EndpointSlice@5");
    expect(coversOf(one)).toEqual(["Deployment/g1-pool-relay@7", "EndpointSlice/s-2@8"]);
    // The carried slice changed again: an add of it as it is now; a covered one carried: its entry goes.
    const again = merged(one, slice("s-1", "9"));
    expect(`${again.type.split(".").at(-1)} ${(again.data as Watched).metadata.resourceVersion}`).toBe("add 9");
    expect(coversOf(again)).toEqual(["Deployment/g1-pool-relay@7", "EndpointSlice/s-2@8"]);
    const plain = merged(merged(deployment("6"), slice("s-2", "8")), deployment("10"));
    expect(coversOf(plain)).toEqual(["EndpointSlice/s-2@8"]);
    expect(COVERS in merged(deployment("6"), deployment("7")).extensions).toBe(false);
  });
});

describe("laneOf: a pair's own events apart from its children's", () => {
  it.each([
    { key: queueKey("DynamoPoolRelay", obj("g1", "1", "u", "DynamoPoolRelay"), "n/g1"), expected: "pairs" },
    { key: requeueKey("n/g1"), expected: "pairs" },
    { key: queueKey("Deployment", obj("g1-pool-relay", "1"), "n/g1"), expected: "children" },
    { key: queueKey("EndpointSlice", obj("g1-pool-relay-x", "1", "u", "EndpointSlice"), "n/g1"), expected: "children" },
    { key: queueKey("Service", obj("g1-pool-relay", "1", "u", "Service"), "n/g1"), expected: "children" },
    { key: queueKey("ConfigMap", obj("g1-pool-relay", "1", "u", "ConfigMap"), "n/g1"), expected: "children" },
  ])("$key: $expected", ({ key, expected }) => {
    expect(laneOf(key)).toBe(expected);
  });
});

describe("changeEvent: the ApiServerSource's Resource-mode event", () => {
  const ctx = { source: "https://10.96.0.1:443", plural: "deployments", time: "2026-12-06T00:00:00Z" };
  it("carries the object as data and its identity as extensions, as Knative's adapter does", () => {
    const d = obj("g1-pool-relay", "42");
    expect(changeEvent("update", d, ctx)).toEqual({
      specversion: "1.0",
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/) as unknown,
      type: "dev.knative.apiserver.resource.update",
      source: "https://10.96.0.1:443",
      subject: "/apis/apps/v1/namespaces/n/deployments/g1-pool-relay",
      time: "2026-12-06T00:00:00Z",
      datacontenttype: "application/json",
      extensions: { kind: "Deployment", apiversion: "apps/v1", name: "g1-pool-relay", namespace: "n" },
      data: d,
    });
  });

  it.each([
    ["add", "dev.knative.apiserver.resource.add"],
    ["delete", "dev.knative.apiserver.resource.delete"],
  ] as const)("types a %s as %s", (change, type) => {
    expect(changeEvent(change, obj("a", "1"), ctx).type).toBe(type);
  });

  it("gives one change of one version one id, and another version, change or object another", () => {
    const id = changeEvent("update", obj("a", "1"), ctx).id;
    expect(changeEvent("update", obj("a", "1"), { ...ctx, time: "2026-12-07T00:00:00Z" }).id).toBe(id);
    expect(
      new Set([
        id,
        changeEvent("update", obj("a", "2"), ctx).id,
        changeEvent("delete", obj("a", "1"), ctx).id,
        changeEvent("update", obj("a", "1", "other"), ctx).id,
      ]).size,
    ).toBe(4);
  });
});

describe("holdMs: how long a change waits before it may leave", () => {
  it.each([
    { change: "update", kind: "Deployment", expected: 1000 },
    { change: "update", kind: "EndpointSlice", expected: 1000 },
    { change: "add", kind: "EndpointSlice", expected: 0 },
    { change: "delete", kind: "Deployment", expected: 0 },
    { change: "update", kind: "DynamoPoolRelay", expected: 0 },
  ] as const)("$change of a $kind: $expected ms", ({ change, kind, expected }) => {
    expect(holdMs(change, kind, 1000)).toBe(expected);
  });
});

describe("awaitsFirstStatus: a pair's children's changes held back until its first status", () => {
  const pair = (status?: Record<string, unknown>, deleting = false) => ({
    metadata: {
      name: "g1",
      namespace: "n",
      generation: 1,
      ...(deleting ? { deletionTimestamp: "2026-12-06T00:00:00Z" } : {}),
    },
    ...(status ? { status } : {}),
  });
  it.each([
    { name: "no status yet", dpr: pair(), expected: true },
    { name: "an empty status", dpr: pair({}), expected: true },
    { name: "the generation observed", dpr: pair({ observedGeneration: 1 }), expected: false },
    { name: "a condition written", dpr: pair({ conditions: [{ type: "Ready", status: "False" }] }), expected: false },
    { name: "a pair the source does not know", dpr: undefined, expected: false },
    { name: "a pair being deleted", dpr: pair(undefined, true), expected: false },
  ])("$name: $expected", ({ dpr, expected }) => {
    expect(awaitsFirstStatus(dpr)).toBe(expected);
  });
});
