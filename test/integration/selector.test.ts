// DynamoPoolRelays that pick their DGDs by label (spec.dgdSelector), end to end on the real Knative
// Eventing: the product's source routes each DGD change to the selectors it matches before or after,
// apply and status list the selected DGDs, and the Relay's document lists every eligible one's
// worker namespaces.
import { beforeAll, describe, expect, it } from "vitest";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { invocations } from "./knative-helpers.ts";
import { children, condition, rollout, settledDpr, type Dpr } from "./pipeline-helpers.ts";

let admin: KubeClient;
beforeAll(async () => {
  admin = await adminClient();
});

const labelledDgd = (ns: string, name: string, labels: Record<string, string>): KubeObject =>
  dgdObject(ns, name, {}, labels);
// Small requests: the fake node's 64 CPUs bound the Relay pods of the whole suite, 1 CPU each by default.
const picking = (ns: string, name: string, matchLabels: Record<string, string>) =>
  dprObject(ns, name, { dgdSelector: { matchLabels }, resources: { requests: { cpu: "10m", memory: "16Mi" } } });

/** The sources document the Relay of `name` reads: its worker namespaces. */
async function documentOf(ns: string, name: string): Promise<string[]> {
  const cm = (await children(admin, ns, name)).ConfigMap;
  const doc = JSON.parse(cm?.data["sources.json"] ?? '{"sources":[]}') as { sources: { namespace: string }[] };
  return doc.sources.map((s) => s.namespace);
}

/** Waits for the status and the document both to list exactly these worker namespaces (and the status, `selected` DGDs). */
async function serving(
  ns: string,
  name: string,
  namespaces: string[],
  what: string,
  selected?: number,
  timeoutMs = 60_000,
): Promise<Dpr> {
  const dpr = await settledDpr(
    ns,
    name,
    what,
    (d) =>
      condition(d, "ServicePublished")?.status === "True" &&
      JSON.stringify(d.status?.workerNamespaces) === JSON.stringify(namespaces) &&
      (selected === undefined || d.status?.selectedDGDs === selected),
    timeoutMs,
  );
  expect(await documentOf(ns, name)).toEqual(namespaces);
  return dpr;
}

describe("a DynamoPoolRelay with spec.dgdSelector", () => {
  it("serves the three DGDs it selects, not the one it does not; a DGD relabelled out leaves its document", async () => {
    const ns = await freshNamespace("selector");
    for (const name of ["a1", "a2", "a3"]) await admin.apply(labelledDgd(ns, name, { pool: "a" }), TEST_MANAGER);
    await admin.apply(labelledDgd(ns, "b1", { pool: "b" }), TEST_MANAGER);
    await admin.apply(picking(ns, "pool", { pool: "a" }), TEST_MANAGER);
    const dpr = await serving(ns, "pool", [`${ns}-a1`, `${ns}-a2`, `${ns}-a3`], "serves a1, a2 and a3", 3);
    expect(dpr.status).toMatchObject({
      selectedDGDs: 3,
      eligibleDGDs: 3,
      serviceEndpoint: `pool-pool-relay.${ns}.svc:5561`,
    });
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "True" });
    await settledDpr(ns, "pool", "is Ready", (d) => condition(d, "Ready")?.status === "True", 90_000);

    // Relabelled out: only the source knows it was selected (the DGD's event carries the new labels).
    const relabelled = Date.now();
    await admin.apply(labelledDgd(ns, "a2", { pool: "b" }), TEST_MANAGER);
    const after = await serving(ns, "pool", [`${ns}-a1`, `${ns}-a3`], "leaves a2 out", 2);
    console.log(`a2's worker namespace left the document ${(Date.now() - relabelled) / 1000} s after its relabel`);
    expect(after.status).toMatchObject({ selectedDGDs: 2, eligibleDGDs: 2 });
    // The request came from the source, for a DGD change; eligibility left the selector to it.
    await eventually("apply ran for pool on the source's request", async () =>
      invocations("apply").some(
        (i) => i.key?.namespace === ns && i.key.name === "pool" && i.event.source === "/dynamo-pool-relay/source",
      ),
    );
    expect(invocations("eligibility").some((i) => i.key?.namespace === ns && i.decision === "Reconcile")).toBe(false);

    // A rollout of a selected DGD, and a DGD relabelled in.
    await rollout(ns, ["aaaa1111", "bbbb2222"], "a3");
    await serving(ns, "pool", [`${ns}-a1`, `${ns}-a3-aaaa1111`, `${ns}-a3-bbbb2222`], "follows a3's rollout");
    await admin.apply(labelledDgd(ns, "b1", { pool: "a" }), TEST_MANAGER);
    await serving(ns, "pool", [`${ns}-a1`, `${ns}-a3-aaaa1111`, `${ns}-a3-bbbb2222`, `${ns}-b1`], "takes b1 in");
  });

  it("withdraws its Service when no DGD it selects is eligible, and publishes it again when one is", async () => {
    const ns = await freshNamespace("selector-none");
    await admin.apply(labelledDgd(ns, "a1", { pool: "a" }), TEST_MANAGER);
    await admin.apply(picking(ns, "pool", { pool: "a" }), TEST_MANAGER);
    await serving(ns, "pool", [`${ns}-a1`], "serves a1");
    await admin.apply(labelledDgd(ns, "a1", { pool: "z" }), TEST_MANAGER);
    const none = await settledDpr(
      ns,
      "pool",
      "withdrawn, no DGD selected",
      (d) => condition(d, "ServicePublished")?.status === "False",
      90_000,
    );
    expect(condition(none, "Eligible")).toMatchObject({ status: "False", reason: "NoDGDSelected" });
    await eventually("the Service is gone", async () => (await children(admin, ns, "pool")).Service === undefined);
    await admin.apply(labelledDgd(ns, "a1", { pool: "a" }), TEST_MANAGER);
    await serving(ns, "pool", [`${ns}-a1`], "serves a1 again");
  });

  it("one DynamoPoolRelay selecting 200 DGDs lists them all in one document, asking apply a few times, not once a DGD", async () => {
    const ns = await freshNamespace("selector-200");
    await admin.apply(picking(ns, "pool", { pool: "a" }), TEST_MANAGER);
    const names = Array.from({ length: 200 }, (_, i) => `d${String(i).padStart(3, "0")}`);
    for (const name of names) await admin.apply(labelledDgd(ns, name, { pool: "a" }), TEST_MANAGER);
    const dpr = await serving(
      ns,
      "pool",
      names.map((n) => `${ns}-${n}`),
      "serves the 200 DGDs",
      200,
      90_000,
    );
    expect(dpr.status).toMatchObject({ selectedDGDs: 200, eligibleDGDs: 200 });
    const document = (await children(admin, ns, "pool")).ConfigMap!.data["sources.json"]!;
    expect(Buffer.byteLength(document)).toBeLessThan(1 << 20);
    // The source holds a DGD change a second before it asks, so a burst asks a few times.
    const runs = invocations("apply").filter((i) => i.key?.namespace === ns && i.key.name === "pool");
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.length).toBeLessThan(50);
    console.log(
      `200 DGDs under one selector: ${runs.length} apply runs, document ${Buffer.byteLength(document)} bytes`,
    );
  });

  it("a DGD two DynamoPoolRelays select is served by both, and its rollout reaches both", async () => {
    const ns = await freshNamespace("selector-two");
    await admin.apply(labelledDgd(ns, "d1", { pool: "a", tier: "gold" }), TEST_MANAGER);
    await admin.apply(picking(ns, "by-pool", { pool: "a" }), TEST_MANAGER);
    await admin.apply(picking(ns, "by-tier", { tier: "gold" }), TEST_MANAGER);
    await serving(ns, "by-pool", [`${ns}-d1`], "serves d1");
    await serving(ns, "by-tier", [`${ns}-d1`], "serves d1");
    await rollout(ns, ["cccc3333"], "d1");
    await serving(ns, "by-pool", [`${ns}-d1-cccc3333`], "follows d1's rollout");
    await serving(ns, "by-tier", [`${ns}-d1-cccc3333`], "follows d1's rollout");
  });
});
