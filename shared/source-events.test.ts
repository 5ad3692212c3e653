import { describe, expect, it } from "vitest";
import { changeEvent, relistChanges, sent, type Watched } from "./source-events.ts";

const obj = (name: string, resourceVersion: string, uid = `uid-${name}`, kind = "Deployment"): Watched => ({
  apiVersion: "apps/v1",
  kind,
  metadata: { name, namespace: "n", uid, resourceVersion },
});
const known = (...objs: Watched[]) => new Map(objs.map((o) => [`n/${o.metadata.name}`, o]));
const summary = (changes: { change: string; obj: Watched }[]) => changes.map((c) => `${c.change} ${c.obj.metadata.name}@${c.obj.metadata.resourceVersion}`);

describe("relistChanges: what changed while no watch ran", () => {
  it.each([
    { name: "nothing changed", before: [obj("a", "1"), obj("b", "2")], listed: [obj("a", "1"), obj("b", "2")], expected: [] },
    { name: "one updated", before: [obj("a", "1"), obj("b", "2")], listed: [obj("a", "1"), obj("b", "7")], expected: ["update b@7"] },
    { name: "one added", before: [obj("a", "1")], listed: [obj("a", "1"), obj("c", "9")], expected: ["add c@9"] },
    { name: "one gone: deleted as last seen", before: [obj("a", "1"), obj("b", "2")], listed: [obj("a", "1")], expected: ["delete b@2"] },
    { name: "one re-created under the same name (same version number cannot tell)", before: [obj("a", "5", "old")], listed: [obj("a", "5", "new")], expected: ["update a@5"] },
    { name: "all at once", before: [obj("a", "1"), obj("b", "2")], listed: [obj("b", "3"), obj("c", "4")], expected: ["update b@3", "add c@4", "delete a@1"] },
    { name: "first list of an empty store", before: [], listed: [obj("a", "1")], expected: ["add a@1"] },
  ])("$name", ({ before, listed, expected }) => {
    expect(summary(relistChanges(known(...before), listed))).toEqual(expected);
  });

  it("tells objects of the same name in different namespaces apart", () => {
    const other = { ...obj("a", "1"), metadata: { ...obj("a", "1").metadata, namespace: "m" } };
    const before = new Map([["n/a", obj("a", "1")]]);
    expect(summary(relistChanges(before, [obj("a", "1"), other]))).toEqual(["add a@1"]);
  });
});

describe("sent: the changes the source leaves unsent", () => {
  it.each([
    { change: "add", kind: "ConfigMap", expected: false },
    { change: "add", kind: "Deployment", expected: false },
    { change: "add", kind: "Service", expected: false },
    { change: "add", kind: "EndpointSlice", expected: true },
    { change: "add", kind: "DynamoPoolRelay", expected: true },
    { change: "update", kind: "Deployment", expected: true },
    { change: "update", kind: "Service", expected: true },
    { change: "update", kind: "ConfigMap", expected: true },
    { change: "delete", kind: "Deployment", expected: true },
    { change: "delete", kind: "Service", expected: true },
  ] as const)("$change of a $kind: $expected", ({ change, kind, expected }) => {
    expect(sent(change, kind)).toBe(expected);
  });
});

describe("changeEvent: the ApiServerSource's Resource-mode event", () => {
  const ctx = { source: "https://10.96.0.1:443", plural: "deployments", time: "2026-12-06T00:00:00Z" };
  it("carries the object as data and its identity as extensions, as Knative's adapter does", () => {
    const d = obj("g1-pool-relay", "42");
    expect(changeEvent("update", d, ctx)).toEqual({
      specversion: "1.0",
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
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
    expect(new Set([id, changeEvent("update", obj("a", "2"), ctx).id, changeEvent("delete", obj("a", "1"), ctx).id, changeEvent("update", obj("a", "1", "other"), ctx).id]).size).toBe(4);
  });
});
