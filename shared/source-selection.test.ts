// The event source and DynamoPoolRelays that pick their DGDs by label: which of them a DGD's change
// reaches (SourceStore.take, selectedBy), and how the requeue judges one from what the source keeps
// of its namespace's DGDs (requeueReason, pairVerdict).
import { describe, expect, it } from "vitest";
import { dgd } from "../test/builders.ts";
import { convergedPair, objectsOf, settings } from "../test/source-pair.ts";
import { pairVerdict, requeueReason } from "./requeue.ts";
import { SourceStore } from "./source-store.ts";
import type { Seen } from "./source-views.ts";

const selector = { matchLabels: { pool: "a" } };
/** A DGD of team-a with these labels, its workers' components named after it. */
const labelled = (name: string, labels: Record<string, string>, resourceVersion = "1"): Seen => {
  const d = dgd({ name, labels, componentNames: { decode: [`${name}-decode-aaaa1111`] } });
  return { ...d, metadata: { ...d.metadata, uid: `uid-${name}`, resourceVersion } };
};
const dgds = () => [labelled("a1", { pool: "a" }), labelled("a2", { pool: "a" }), labelled("b1", { pool: "b" })];
/** The pair team-a/g1, converged over a1 and a2, with the DGDs of its namespace. */
const picking = () => convergedPair({ selector, dgds: dgds() });
const PAIR = "team-a/g1";

/** A store that has taken the pair's objects, then these DGDs, as the source lists them. */
function storeWith(objects: readonly Seen[], namespaceDgds: readonly Seen[] = dgds()): SourceStore {
  const store = new SourceStore(settings);
  const [dprObj, , ...children] = objects;
  for (const o of [dprObj!, ...namespaceDgds, ...children]) store.take("add", o, 0);
  return store;
}

describe("a selector DynamoPoolRelay, converged", () => {
  it("is judged converged from the DGDs of its namespace, its union of worker namespaces shown", () => {
    const p = picking();
    expect(p.decision.sources.text).toContain("team-a-a1-");
    expect(p.decision.sources.text).toContain("team-a-a2-");
    expect(p.decision.sources.text).not.toContain("team-a-b1-");
    const store = storeWith(objectsOf(p));
    const view = store.view(PAIR)!;
    expect(view.namespaceDgds?.map((d) => d.name).sort()).toEqual(["a1", "a2", "b1"]);
    expect(pairVerdict(view, settings)).toMatchObject({ eligible: true, selected: 2, eligibleCount: 2 });
    expect(requeueReason(view, settings)).toBeUndefined();
  });

  it.each([
    { what: "a selected DGD relabelled out", dgd: labelled("a1", { pool: "b" }, "2"), reaches: true },
    { what: "a DGD relabelled in", dgd: labelled("b1", { pool: "a" }, "2"), reaches: true },
    { what: "a new DGD it selects", dgd: labelled("a3", { pool: "a" }, "2"), reaches: true },
    {
      what: "a selected DGD rolled out",
      dgd: {
        ...labelled("a2", { pool: "a" }, "2"),
        ...dgd({ name: "a2", labels: { pool: "a" }, componentNames: { decode: ["a2-decode-bbbb2222"] } }),
        metadata: { ...labelled("a2", { pool: "a" }, "2").metadata },
      },
      reaches: true,
    },
    { what: "a DGD it does not select, changed", dgd: labelled("b1", { pool: "b", x: "y" }, "2"), reaches: false },
  ])("$what: reaches it (reaches $reaches) and is judged against what it shows", ({ dgd: changed, reaches }) => {
    const store = storeWith(objectsOf(picking()));
    const record = store.record(PAIR)!;
    Object.assign(record, { judged: null, asked: 2 });
    const taken = store.take("update", changed, 50);
    expect(taken?.selectedBy).toEqual(reaches ? [PAIR] : []);
    // Judged anew either way; quiet from the change and its backoff over only when it was reached.
    expect(record.judged).toBeUndefined();
    expect(record).toMatchObject(reaches ? { since: 50, asked: 0 } : { since: 0, asked: 2 });
    expect(requeueReason(store.view(PAIR)!, settings)).toBe(reaches ? "DGDNotShown" : undefined);
  });

  it("is not converged while its status shows another selection than its DGDs make, the union the same", () => {
    const p = picking();
    const status = p.dpr["status"] as Record<string, unknown>;
    for (const stale of [
      { selectedDGDs: 12 },
      { eligibleDGDs: 1 },
      { excludedDGDs: [{ name: "a9", reason: "DGDNotFound", message: "" }] },
    ]) {
      const dpr = { ...p.dpr, status: { ...status, ...stale } };
      const store = storeWith([dpr, ...objectsOf(p).slice(1)]);
      expect(requeueReason(store.view(PAIR)!, settings)).toBe("DGDNotShown");
    }
  });

  it("a selected DGD deleted reaches it, by the labels it had", () => {
    const store = storeWith(objectsOf(picking()));
    expect(store.take("delete", labelled("a1", { pool: "a" }), 5)?.selectedBy).toEqual([PAIR]);
    expect(requeueReason(store.view(PAIR)!, settings)).toBe("DGDNotShown");
    expect(
      store
        .view(PAIR)!
        .namespaceDgds?.map((d) => d.name)
        .sort(),
    ).toEqual(["a2", "b1"]);
  });

  it("a DGD of another namespace reaches no selector", () => {
    const store = storeWith(objectsOf(picking()));
    const elsewhere = { ...labelled("a1", { pool: "a" }, "7") };
    elsewhere.metadata = { ...elsewhere.metadata, namespace: "team-b" };
    expect(store.take("update", elsewhere, 5)?.selectedBy).toBeUndefined();
    expect(requeueReason(store.view(PAIR)!, settings)).toBeUndefined();
  });

  it("two DynamoPoolRelays selecting one DGD are both reached; the one of the DGD's name by its own record too", () => {
    const p = picking();
    const store = storeWith(objectsOf(p));
    const other = { ...p.dpr, metadata: { ...p.dpr.metadata, name: "a1", uid: "uid-dpr-a1", resourceVersion: "5" } };
    store.take("add", other, 1);
    expect(store.take("update", labelled("a1", { pool: "a", v: "2" }, "3"), 9)?.selectedBy?.sort()).toEqual([
      "team-a/a1",
      PAIR,
    ]);
  });

  it("stops routing to one that no longer selects: its spec without dgdSelector, or deleted", () => {
    const p = picking();
    const store = storeWith(objectsOf(p));
    const plain = {
      ...p.dpr,
      spec: { image: "relay:1", clusterID: "dc-1" },
      metadata: { ...p.dpr.metadata, resourceVersion: "8" },
    };
    store.take("update", plain, 1);
    expect(store.take("update", labelled("a1", { pool: "a" }, "3"), 2)?.selectedBy).toBeUndefined();
    expect(store.view(PAIR)!.namespaceDgds).toBeUndefined();
  });
});

describe("a selector DynamoPoolRelay whose namespace's DGDs were seen before it", () => {
  it("asks for the namespace's DGDs to be read again, then judges it from them", () => {
    const p = picking();
    const [dprObj, , ...children] = objectsOf(p);
    const store = new SourceStore(settings);
    // The DGDs first: no selector in their namespace then, so their labels were not kept. The
    // DynamoPoolRelay's change says so, for the source to read them at once.
    for (const o of dgds()) store.take("add", o, 0);
    expect(store.take("add", dprObj!, 0)?.rereadDgds).toBe(true);
    for (const o of children) store.take("add", o, 0);
    expect(pairVerdict(store.view(PAIR)!, settings)).toBe("reread");
    expect(requeueReason(store.view(PAIR)!, settings)).toEqual({ dgd: false, namespaceDgds: true, children: [] });
    for (const d of dgds()) store.retake(d, 10);
    expect(requeueReason(store.view(PAIR)!, settings)).toBeUndefined();
    // Read again at the versions known: nothing changed, so the pair's activity stays.
    expect(store.record(PAIR)).toMatchObject({ since: 0, asked: 0 });
    // Now every DGD there has its labels: another selector needs no read.
    const another = { ...dprObj!, metadata: { ...dprObj!.metadata, name: "g2", uid: "uid-g2", resourceVersion: "7" } };
    expect(store.take("add", another, 11)?.rereadDgds).toBeUndefined();
  });
});

describe("pairVerdict", () => {
  it("names the selected DGDs that are not eligible, and withdraws when none is", () => {
    const store = storeWith(objectsOf(picking()), [
      labelled("a1", { pool: "a" }),
      {
        ...labelled("a2", { pool: "a" }),
        metadata: {
          ...labelled("a2", { pool: "a" }).metadata,
          annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" },
        },
      },
    ]);
    expect(pairVerdict(store.view(PAIR)!, settings)).toMatchObject({
      eligible: true,
      selected: 2,
      eligibleCount: 1,
      excluded: [{ name: "a2", reason: "DiscoveryBackendNotKubernetes" }],
    });
    store.take("delete", labelled("a1", { pool: "a" }), 1);
    expect(pairVerdict(store.view(PAIR)!, settings)).toMatchObject({
      eligible: false,
      reason: "NoEligibleDGD",
      selected: 1,
    });
    store.take("delete", labelled("a2", { pool: "a" }), 2);
    expect(pairVerdict(store.view(PAIR)!, settings)).toMatchObject({ eligible: false, reason: "NoDGDSelected" });
  });
});
