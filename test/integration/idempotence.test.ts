// At-least-once, unordered delivery: duplicated, reordered, late and concurrent events all end in
// the same state, and an event or resync in steady state writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../../shared/kube/client.ts";
import { productEvent, EventType } from "../../shared/events.ts";
import { TEST_MANAGER, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { CHILD_REFS, childEvents, condition, dgdRef, getDpr, now, pingEvent, resync, startHarness, watchEvent, type Harness } from "./pipeline-helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.pipeline.stop();
});


/** resourceVersion of the DynamoPoolRelay and of each child (undefined when absent). */
async function versions(ns: string): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = { DynamoPoolRelay: (await getDpr(h, ns, "g1")).metadata.resourceVersion };
  for (const [apiVersion, kind] of CHILD_REFS) out[kind] = (await h.admin.get<KubeObject>({ apiVersion, kind, namespace: ns, name: "g1-pool-relay" }))?.metadata.resourceVersion;
  return out;
}

/** The state that matters, without versions and times. */
async function state(ns: string) {
  const dpr = await getDpr(h, ns, "g1");
  const cm = await h.admin.get<{ data: Record<string, string> }>({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "g1-pool-relay" });
  const svc = await h.admin.get({ apiVersion: "v1", kind: "Service", namespace: ns, name: "g1-pool-relay" });
  return {
    observedGeneration: dpr.status?.["observedGeneration"],
    conditions: (dpr.status?.["conditions"] ?? []).map((c: { type: string; status: string; reason: string }) => `${c.type}=${c.status}/${c.reason}`),
    sources: cm?.data["sources.json"],
    service: svc !== undefined,
  };
}

/** Lets the Relay pods come up and status catch up, as child events would on a cluster. */
async function settled(ns: string) {
  await eventually("the DynamoPoolRelay is Ready", async () => {
    await childEvents(h, ns);
    return condition(await getDpr(h, ns, "g1"), "Ready")?.status === "True";
  });
  return state(ns);
}

async function setUp(prefix: string) {
  const ns = await freshNamespace(prefix);
  await h.admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
  await h.admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
  return ns;
}

describe("delivery semantics", () => {
  it("ends in the same state whether events arrive once, duplicated, reordered, late or concurrently", async () => {
    // Reference: one clean delivery.
    const clean = await setUp("clean");
    const cleanDgd = (await h.admin.get<KubeObject>(dgdRef(clean, "g1")))!;
    await h.pipeline.broker.publish(watchEvent("ADDED", cleanDgd));
    const expected = { ...(await settled(clean)), sources: undefined };

    const ns = await setUp("chaos");
    const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
    const added = watchEvent("ADDED", dgd);
    const reconcile = productEvent(EventType.Reconcile, { namespace: ns, name: "g1", cause: "DGDChanged" }, { source: "/test", cause: "x", time: now() });
    const appliedLate = productEvent(EventType.Applied, { namespace: ns, name: "g1", uid: "stale", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/test", cause: "y", time: now() });
    // Late and out of order: a status report before anything was applied, then the same events
    // several times at once, then a stale ADDED event carrying an old copy of the object.
    await h.pipeline.broker.publish(appliedLate);
    await Promise.all([
      h.pipeline.broker.publish(added),
      h.pipeline.broker.publish(added),
      h.pipeline.broker.publish(reconcile),
      h.pipeline.broker.publish(reconcile),
      h.pipeline.broker.publish(watchEvent("MODIFIED", dgd)),
    ]);
    await h.pipeline.broker.publish(added);
    await h.pipeline.broker.publish(appliedLate);
    await resync(h);
    const got = await settled(ns);
    expect({ ...got, sources: undefined }).toEqual(expected);
    expect(JSON.parse(got.sources!).sources).toEqual([{ namespace: `${ns}-g1` }]);
    expect(condition(await getDpr(h, ns, "g1"), "ServicePublished")?.status).toBe("True");
  });

  it("does not resurrect a withdrawn Service when a stale ADDED event arrives after the DGD was deleted", async () => {
    const ns = await setUp("late");
    const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
    await h.pipeline.broker.publish(watchEvent("ADDED", dgd));
    await h.admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await h.pipeline.broker.publish(watchEvent("DELETED", dgd));
    await h.pipeline.broker.publish(watchEvent("ADDED", dgd)); // replayed late: the payload says the DGD exists
    expect(await h.admin.get({ apiVersion: "v1", kind: "Service", namespace: ns, name: "g1-pool-relay" })).toBeUndefined();
    expect(condition(await getDpr(h, ns, "g1"), "Eligible")).toMatchObject({ status: "False", reason: "DGDNotFound" });
  });

  it("writes nothing for a steady-state DGD event, child event or resync", async () => {
    const ns = await setUp("steady");
    const dgd = (await h.admin.get<KubeObject>(dgdRef(ns, "g1")))!;
    await h.pipeline.broker.publish(watchEvent("ADDED", dgd));
    await settled(ns);
    const before = await versions(ns);
    const logsBefore = h.logs.length;
    await h.pipeline.broker.publish(watchEvent("MODIFIED", dgd));
    await childEvents(h, ns);
    // Every slot of the resync, so this DynamoPoolRelay's periodic full reconcile is included.
    for (let tick = 0; tick < h.pipeline.config.resyncSlots; tick++) {
      await h.pipeline.broker.publish(pingEvent(new Date(Date.now() + tick * h.pipeline.config.resyncPeriodSeconds * 1000).toISOString()));
      await h.pipeline.broker.idle();
    }
    expect(await versions(ns)).toEqual(before);
    const invocations = h.logs.slice(logsBefore).filter((l) => JSON.stringify(l).includes(ns) || l["decision"] === "Resync");
    expect(new Set(invocations.map((l) => l["function"]))).toEqual(new Set(["eligibility", "apply", "status"]));
    expect(invocations.map((l) => l["writes"])).toEqual(invocations.map(() => 0));
  });
});
