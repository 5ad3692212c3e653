import { describe, expect, it } from "vitest";
import { EventType, childOwnerKey, derivedId, parseData, productEvent, ReconcileData } from "./events.ts";

describe("productEvent", () => {
  const ctx = { source: "/dynamo-pool-relay/apply", cause: "in-1", time: "2026-01-01T00:00:00Z" };
  it("builds a versioned, namespaced event with the key as subject", () => {
    const e = productEvent(EventType.Reconcile, { namespace: "n", name: "g", cause: "Resync" }, ctx);
    expect(e).toMatchObject({
      specversion: "1.0",
      type: "com.nvidia.dynamo.poolrelay.reconcile.v1",
      source: ctx.source,
      subject: "n/g",
      time: ctx.time,
      datacontenttype: "application/json",
    });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("gives a redelivered cause the same id, and another cause or key another id", () => {
    const a = productEvent(EventType.Reconcile, { namespace: "n", name: "g", cause: "Resync" }, ctx).id;
    expect(productEvent(EventType.Reconcile, { namespace: "n", name: "g", cause: "Resync" }, ctx).id).toBe(a);
    expect(productEvent(EventType.Reconcile, { namespace: "n", name: "h", cause: "Resync" }, ctx).id).not.toBe(a);
    expect(
      productEvent(EventType.Reconcile, { namespace: "n", name: "g", cause: "Resync" }, { ...ctx, cause: "in-2" }).id,
    ).not.toBe(a);
  });

  it("marks a report apply showed itself with the statuswritten extension the status Trigger filters on, and no other", () => {
    const outcome = { namespace: "n", name: "g", uid: "u", generation: 1 };
    const shown = productEvent(
      EventType.Applied,
      { ...outcome, applied: ["Service"], unchanged: [], skipped: [], statusWritten: true },
      ctx,
    );
    expect(shown.extensions).toEqual({ statuswritten: "true" });
    const withdrawn = productEvent(
      EventType.Withdrawn,
      { ...outcome, reason: "DGDNotFound", message: "m", service: "deleted", statusWritten: true },
      ctx,
    );
    expect(withdrawn.extensions).toEqual({ statuswritten: "true" });
    expect(
      productEvent(EventType.Applied, { ...outcome, applied: ["Service"], unchanged: [], skipped: [] }, ctx).extensions,
    ).toEqual({});
    expect(
      productEvent(EventType.Rejected, { ...outcome, reason: "ApplyFailed", message: "m" }, ctx).extensions,
    ).toEqual({});
  });

  it("derives ids that do not collide on part boundaries", () => {
    expect(derivedId("ab", "c")).not.toBe(derivedId("a", "bc"));
  });
});

describe("parseData", () => {
  it("names every invalid field", () => {
    const r = parseData(
      { specversion: "1.0", id: "e", type: "t", source: "s", extensions: {}, data: { name: "" } },
      ReconcileData,
    );
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/the data of t event e is invalid: namespace: .*; name: .*; cause: /);
  });
});

describe("childOwnerKey", () => {
  const obj = (labels: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "g1-pool-relay", namespace: "n", labels },
  });
  it.each<{ name: string; labels: Record<string, string>; expected: unknown }>([
    {
      name: "a managed child",
      labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" },
      expected: { namespace: "n", name: "g1" },
    },
    {
      name: "an object someone else manages",
      labels: { "app.kubernetes.io/managed-by": "helm", "app.kubernetes.io/instance": "g1" },
      expected: undefined,
    },
    {
      name: "a managed object without instance",
      labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay" },
      expected: undefined,
    },
  ])("finds $expected for $name", ({ labels, expected }) => {
    expect(childOwnerKey(obj(labels))).toEqual(expected);
  });
});
