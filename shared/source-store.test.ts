import { describe, expect, it } from "vitest";
import { convergedPair, objectsOf, settings, storeOf } from "../test/source-pair.ts";
import { SourceStore, sentFactsOf } from "./source-store.ts";
import type { Seen } from "./source-views.ts";

const p = convergedPair();
const at = (obj: Seen, resourceVersion: string, edit: Record<string, unknown> = {}): Seen => ({
  ...obj,
  ...edit,
  metadata: { ...obj.metadata, resourceVersion },
});
const summary = (t: { change: string; pair: string } | undefined) => (t ? `${t.change} ${t.pair}` : "nothing");

describe("SourceStore.take: a watched change", () => {
  it("takes a change once: the same version again brings nothing", () => {
    const store = new SourceStore(settings);
    expect(summary(store.take("add", p.children.Deployment, 0))).toBe("add team-a/g1");
    expect(summary(store.take("update", p.children.Deployment, 1))).toBe("nothing");
    expect(summary(store.take("update", at(p.children.Deployment, "900"), 2))).toBe("update team-a/g1");
    expect(summary(store.take("delete", p.children.Deployment, 3))).toBe("delete team-a/g1");
    expect(summary(store.take("delete", p.children.Deployment, 4))).toBe("nothing");
  });

  it("calls an update of an object it never saw an add (it came while no watch ran)", () => {
    const store = new SourceStore(settings);
    expect(summary(store.take("update", p.children.ConfigMap, 0))).toBe("add team-a/g1");
  });

  it("gives the view as it was before the change, for what the source sends (shared/source-events.ts, sent)", () => {
    const store = storeOf(objectsOf(p));
    const taken = store.take("update", at(p.children.Deployment, "901", { status: {} }), 5);
    expect(taken?.previous).toMatchObject({
      kind: "Deployment",
      resourceVersion: "105",
      more: { deployment: { readyReplicas: 2 } },
    });
    // What `sent` compares of it: the digest of what status read of it then.
    expect(sentFactsOf(taken!.previous)).toEqual({
      digest: (taken!.previous as { more: { digest: string } }).more.digest,
    });
    expect(sentFactsOf(store.view("team-a/g1")!.dpr)).toEqual({ metadata: { generation: 1 } });
    expect(sentFactsOf(undefined)).toBeUndefined();
  });

  it("keeps nothing of an object that belongs to no pair (labelled as the product's, without an instance)", () => {
    const store = new SourceStore(settings);
    const churn = {
      ...p.children.Deployment,
      metadata: { ...p.children.Deployment.metadata, labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay" } },
    };
    expect(store.take("add", churn, 0)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it("marks a pair changed: its quiet time and the requeue's backoff start over, its judgment is made again", () => {
    const store = storeOf(objectsOf(p));
    const r = store.record("team-a/g1")!;
    for (const [obj, t] of [
      [at(p.children.Deployment, "902"), 50],
      [at(p.dgd, "903"), 60],
      [at(p.dpr, "904"), 70],
    ] as const) {
      Object.assign(r, { judged: null, asked: 3 });
      store.take("update", obj, t);
      expect(r).toMatchObject({ since: t, asked: 0 });
      expect(r.judged).toBeUndefined();
    }
  });
});

describe("SourceStore.decisions: what a pair's children may carry", () => {
  it("makes its status's and its DGD's decisions once for each version of the pair's DynamoPoolRelay and DGD", () => {
    const store = storeOf(objectsOf(p));
    const first = store.decisions("team-a/g1");
    expect(first.map((d) => d.action)).toEqual(["apply", "apply"]);
    expect(store.decisions("team-a/g1")).toBe(first);
    store.take("update", at(p.dgd, "777"), 1);
    const again = store.decisions("team-a/g1");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    store.take(
      "update",
      {
        ...p.dpr,
        metadata: { ...p.dpr.metadata, resourceVersion: "778", generation: 2 },
        spec: { ...(p.dpr["spec"] as object), clusterID: "dc-2" },
      },
      2,
    );
    // A status of generation 1 records nothing for generation 2: the DGD's decision alone, of the new spec.
    const made = store.decisions("team-a/g1") as unknown as { connectionRevision: string }[];
    expect(made).toHaveLength(1);
    expect(made[0]!.connectionRevision).not.toBe((first[0] as { connectionRevision: string }).connectionRevision);
    expect(store.decisions("team-b/none")).toEqual([]);
  });
});

describe("SourceStore: what it keeps of a DGD", () => {
  it("keeps a DGD no DynamoPoolRelay pairs with by its version alone, and what it decides once one does", () => {
    const store = new SourceStore(settings);
    store.take("add", p.dgd, 0);
    expect(store.record("team-a/g1")!.dgd).toEqual({ resourceVersion: "90" });
    store.take("add", p.dpr, 1);
    store.take("update", at(p.dgd, "91"), 2);
    expect(store.record("team-a/g1")!.dgd).toEqual({
      resourceVersion: "91",
      verdict: { eligible: true, namespaces: ["team-a-g1-aaaa1111"] },
    });
    // The pair gone, its DGD is a version again; both gone, nothing is left.
    store.take("delete", p.dpr, 3);
    expect(store.record("team-a/g1")!.dgd).toEqual({ resourceVersion: "91" });
    store.take("delete", p.dgd, 4);
    expect(store.size).toBe(0);
  });

  it("reads a DGD kept by version alone into what it decides (retake), which changes nothing of the pair's activity", () => {
    const store = storeOf([p.dgd, p.dpr]);
    const r = store.record("team-a/g1")!;
    Object.assign(r, { judged: { dgd: true, children: [] }, asked: 2 });
    expect(r.dgd!.verdict).toBeUndefined();
    expect(store.retake(p.dgd, 5)).toBeUndefined();
    expect(r.dgd!.verdict).toEqual({ eligible: true, namespaces: ["team-a-g1-aaaa1111"] });
    expect(r).toMatchObject({ since: 0, asked: 2 });
    expect(r.judged).toBeUndefined();
    // A newer version read again is a change like any other.
    expect(summary(store.retake(at(p.dgd, "95"), 6))).toBe("update team-a/g1");
    expect(r).toMatchObject({ since: 6, asked: 0 });
  });
});

describe("SourceStore: a list tells what changed since the last one", () => {
  const listAll = (store: SourceStore, kind: string, apiVersion: string, objects: Seen[]) => {
    store.listBegan(kind);
    const found = objects.map((o) => summary(store.listed(o, 10)));
    const gone = store.listEnded(kind, apiVersion, 10);
    return {
      found,
      gone: gone.map(
        (g) => `${g.taken.change} ${g.obj.kind} ${g.obj.metadata.name}@${g.obj.metadata.resourceVersion ?? ""}`,
      ),
      objects: gone.map((g) => g.obj),
    };
  };

  it("an add for what is new, an update for what changed, nothing for what did not, a delete for what is gone", () => {
    const store = storeOf(objectsOf(p));
    const otherSlice = {
      ...p.slice,
      metadata: { ...p.slice.metadata, name: "g1-pool-relay-zzzzz", resourceVersion: "300" },
    };
    const r = listAll(store, "EndpointSlice", "discovery.k8s.io/v1", [otherSlice]);
    expect(r.found).toEqual(["add team-a/g1"]);
    expect(r.gone).toEqual(["delete EndpointSlice g1-pool-relay-x7k2p@120"]);
    const d = listAll(store, "Deployment", "apps/v1", [at(p.children.Deployment, "777")]);
    expect(d).toMatchObject({ found: ["update team-a/g1"], gone: [] });
    expect(listAll(store, "Deployment", "apps/v1", [at(p.children.Deployment, "777")]).found).toEqual(["nothing"]);
  });

  it("passes a delete it found on with what status needs of the object: its name, namespace, version and the pair's labels", () => {
    const store = storeOf(objectsOf(p));
    const { objects } = listAll(store, "RoleBinding", "rbac.authorization.k8s.io/v1", []);
    expect(objects).toEqual([
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: {
          name: "g1-pool-relay",
          namespace: "team-a",
          resourceVersion: "103",
          labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" },
        },
      },
    ]);
    expect(store.record("team-a/g1")!.children.map((c) => c.kind)).not.toContain("RoleBinding");
  });

  it("keeps the watch's own changes: what the watch saw deleted is not deleted twice, what it saw added is not new", () => {
    const store = storeOf(objectsOf(p));
    store.take("delete", p.children.Role, 1);
    const r = listAll(store, "Role", "rbac.authorization.k8s.io/v1", []);
    expect(r.gone).toEqual([]);
  });

  it("finds a DynamoPoolRelay deleted while no watch ran, and leaves its DGD a version", () => {
    const store = storeOf(objectsOf(p));
    const r = listAll(store, "DynamoPoolRelay", "nvidia.com/v1alpha1", []);
    expect(r.gone).toEqual(["delete DynamoPoolRelay g1@99"]);
    expect(store.record("team-a/g1")!.dgd).toEqual({ resourceVersion: "90" });
  });
});

describe("SourceStore.gone: an object read again and not found", () => {
  it("deletes a child it knew, by the pair whose view names it", () => {
    const store = storeOf(objectsOf(p));
    expect(summary(store.gone("ConfigMap", "team-a", "g1-pool-relay", 3))).toBe("delete team-a/g1");
    expect(store.gone("ConfigMap", "team-a", "g1-pool-relay", 4)).toBeUndefined();
    expect(store.gone("ConfigMap", "team-b", "g1-pool-relay", 4)).toBeUndefined();
  });
});
