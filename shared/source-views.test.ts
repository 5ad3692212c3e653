import { describe, expect, it } from "vitest";
import { convergedPair, settings, UID } from "../test/source-pair.ts";
import { APPLIED_HASH, childState, desiredChildren } from "./apply-plan.ts";
import { decide } from "./decide.ts";
import type { KubeObject } from "./render/index.ts";
import { childView, dgdView, dprView, judgedAgainst, pairOf, shownDigest, standIn, type Seen } from "./source-views.ts";
import { computeStatus } from "./status.ts";

const p = convergedPair();
const desired = desiredChildren(p.decision);
const desiredOf = (kind: string) => desired.find((d) => d.kind === kind)!;
/** A copy of a seen object, with the fields the edits below reach: each case edits an object that has them. */
interface Editable extends Seen {
  metadata: Seen["metadata"] & { labels: Record<string, string>; annotations: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { name: string; image: string }[] } } };
  data: Record<string, string>;
  rules: unknown[];
}
const edit = (obj: Seen, f: (o: Editable) => void): Seen => {
  const copy = structuredClone(obj) as Editable;
  f(copy);
  return copy;
};

describe("childView and standIn: a child kept as its view is judged as the child itself", () => {
  const cases: { name: string; live: Seen }[] = [
    ...Object.values(p.children).map((live) => ({ name: `${live.kind} as applied`, live })),
    { name: "a Deployment scaled by hand", live: edit(p.children.Deployment, (o) => (o.spec.replicas = 0)) },
    {
      name: "a Deployment with another image",
      live: edit(p.children.Deployment, (o) => (o.spec.template.spec.containers[0]!.image = "other:1")),
    },
    {
      name: "a Deployment a webhook added a sidecar to (not a difference)",
      live: edit(p.children.Deployment, (o) => o.spec.template.spec.containers.push({ name: "sidecar", image: "s:1" })),
    },
    {
      name: "a ConfigMap whose document was edited",
      live: edit(p.children.ConfigMap, (o) => (o.data["sources.json"] = "{}")),
    },
    { name: "a Role with fewer rules", live: edit(p.children.Role, (o) => o.rules.pop()) },
    {
      name: "a Service losing a label",
      live: edit(p.children.Service, (o) => delete o.metadata.labels["app.kubernetes.io/instance"]),
    },
    {
      name: "a RoleBinding with another applied hash",
      live: edit(p.children.RoleBinding, (o) => (o.metadata.annotations[APPLIED_HASH] = "0".repeat(64))),
    },
    {
      name: "a ServiceAccount with no applied hash",
      live: edit(p.children.ServiceAccount, (o) => delete o.metadata.annotations[APPLIED_HASH]),
    },
    {
      name: "a ServiceAccount being deleted",
      live: edit(p.children.ServiceAccount, (o) => (o.metadata.deletionTimestamp = "2026-02-01T00:00:00Z")),
    },
    {
      name: "a Service someone else controls",
      live: edit(p.children.Service, (o) => (o.metadata.ownerReferences![0]!.uid = "someone")),
    },
    {
      name: "a ConfigMap without any controller",
      live: edit(p.children.ConfigMap, (o) => delete o.metadata.ownerReferences),
    },
  ];
  it.each(cases)("$name", ({ live }) => {
    const d = desiredOf(live.kind);
    const view = childView(live, "g1", [p.decision]);
    expect(judgedAgainst(view, d)).not.toBe("unjudged");
    const expected = childState(d, live, UID);
    expect(childState(d, standIn(view, d), UID)).toBe(expected);
    // Under another pair's UID it is foreign, as the child itself is.
    expect(childState(d, standIn(view, d), "other-uid")).toBe(childState(d, live as never, "other-uid"));
  });

  it("covers every outcome of childState (the cases above are not all alike)", () => {
    const outcomes = new Set(cases.map(({ live }) => childState(desiredOf(live.kind), live as never, UID)));
    expect([...outcomes].sort()).toEqual(["current", "foreign", "stale"]);
  });

  it("judges a child by the first decision that renders the intent its annotation names, made only as far as needed", () => {
    const other = decide({ ...p.dpr, spec: { ...(p.dpr["spec"] as object), clusterID: "dc-2" } }, p.dgd, settings);
    const made: string[] = [];
    function* decisions() {
      made.push("first");
      yield other;
      made.push("second");
      yield p.decision;
      made.push("third");
    }
    const view = childView(p.children.Deployment, "g1", decisions());
    expect(made).toEqual(["first", "second"]);
    expect(judgedAgainst(view, desiredOf("Deployment"))).toBe("judged");
    expect(view.intent?.endsWith("+")).toBe(true);
  });

  it("leaves unjudged a child whose intent no known decision renders, and tells it from one carrying another intent", () => {
    const other = decide({ ...p.dpr, spec: { ...(p.dpr["spec"] as object), clusterID: "dc-2" } }, p.dgd, settings);
    const view = childView(p.children.Deployment, "g1", [other]);
    expect(view.intent?.endsWith("?")).toBe(true);
    expect(judgedAgainst(view, desiredOf("Deployment"))).toBe("unjudged");
    expect(
      judgedAgainst(view, desiredChildren(other as never).find((d) => d.kind === "Deployment") as KubeObject),
    ).toBe("other");
  });

  it("keeps what status shows of a Deployment and an EndpointSlice: the counts, the ready endpoints, its Service", () => {
    expect(childView(p.children.Deployment, "g1", []).more?.deployment).toEqual({
      generation: 1,
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });
    const slice = childView(p.slice, "g1", []);
    expect(slice).toMatchObject({ kind: "EndpointSlice", more: { name: "g1-pool-relay-x7k2p", ready: 2 } });
    expect(slice.more?.service).toBeUndefined();
    const elsewhere = edit(p.slice, (o) => (o.metadata.labels["kubernetes.io/service-name"] = "other"));
    expect(childView(elsewhere, "g1", []).more?.service).toBe("other");
  });

  it("keeps nothing more for a child named as its pair's children are, of a kind whose updates all count", () => {
    expect(childView(p.children.Role, "g1", []).more).toBeUndefined();
    expect(childView(p.children.Deployment, "g1", []).more).toMatchObject({ digest: expect.any(String) as unknown });
  });
});

describe("the pair of a child, and the views of a DynamoPoolRelay and a DGD", () => {
  it("pairs a child by the labels the product gives it", () => {
    expect(pairOf(p.children.Role)).toBe("team-a/g1");
    expect(
      pairOf(edit(p.children.Role, (o) => delete o.metadata.labels["app.kubernetes.io/instance"])),
    ).toBeUndefined();
    expect(
      pairOf(edit(p.children.Role, (o) => (o.metadata.labels["app.kubernetes.io/managed-by"] = "helm"))),
    ).toBeUndefined();
  });

  it("keeps of a DynamoPoolRelay what the decisions read, and a digest of its whole status", () => {
    const view = dprView(p.dpr);
    expect(view.metadata).toEqual({ name: "g1", namespace: "team-a", uid: UID, resourceVersion: "99", generation: 1 });
    expect(view.spec).toEqual(p.dpr["spec"]);
    expect(view.shown).toBe(shownDigest(p.dpr["status"] as never));
    expect(Object.keys(view.status!).sort()).toEqual([
      "conditions",
      "connectionRevision",
      "observedGeneration",
      "sourcesResourceVersion",
      "sourcesRevision",
      "workerNamespaces",
    ]);
    expect(view.status!.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}${c.message}`)).toEqual([
      "Ready=True/Ready",
      "Eligible=True/Eligible",
      "ServicePublished=True/Published",
      "ListenerAvailable=True/EndpointsReady",
    ]);
  });

  it("keeps the message of an Eligible condition that is False: a withdrawal's decision carries it", () => {
    const status = p.dpr["status"] as { conditions: { type: string }[] };
    const withdrawn = {
      ...p.dpr,
      status: {
        ...status,
        conditions: status.conditions.map((c) =>
          c.type === "Eligible" ? { ...c, status: "False", reason: "DGDNotFound", message: "gone" } : c,
        ),
      },
    };
    expect(dprView(withdrawn).status!.conditions!.find((c) => c.type === "Eligible")!.message).toBe("gone");
  });

  it("compares statuses without their transition times, but with everything else", () => {
    const status = p.dpr["status"] as Parameters<typeof shownDigest>[0] & {
      conditions: { lastTransitionTime: string; message: string }[];
    };
    const later = {
      ...status,
      conditions: status.conditions.map((c) => ({ ...c, lastTransitionTime: "2027-01-01T00:00:00Z" })),
    };
    const reworded = {
      ...status,
      conditions: status.conditions.map((c, i) => (i === 0 ? { ...c, message: "other" } : c)),
    };
    expect(shownDigest(later)).toBe(shownDigest(status));
    expect(shownDigest(reworded)).not.toBe(shownDigest(status));
    expect(shownDigest({ ...status, readyReplicas: 1 })).not.toBe(shownDigest(status));
  });

  it("keeps a DGD's verdict only once a DynamoPoolRelay pairs with it", () => {
    expect(dgdView(p.dgd, false, settings)).toEqual({ resourceVersion: "90" });
    expect(dgdView(p.dgd, true, settings)).toEqual({
      resourceVersion: "90",
      verdict: { eligible: true, namespaces: ["team-a-g1-aaaa1111"] },
    });
    const etcd = edit(p.dgd, (o) => (o.metadata.annotations = { "nvidia.com/dynamo-discovery-backend": "etcd" }));
    expect(dgdView(etcd, true, settings).verdict).toMatchObject({
      eligible: false,
      reason: "DiscoveryBackendNotKubernetes",
    });
  });

  it("leaves the status computation what it needs of a stand-in Deployment", () => {
    const view = childView(p.children.Deployment, "g1", [p.decision]);
    const status = computeStatus({
      dpr: p.dpr,
      decision: p.decision,
      observed: { deployment: standIn(view, desiredOf("Deployment")) as never, service: undefined, endpointSlices: [] },
      previous: undefined,
      observedGeneration: 1,
      now: "x",
      reflects: true,
      foreign: [],
    });
    expect(status).toMatchObject({ replicas: 2, readyReplicas: 2, readyOfDesired: "2/2" });
  });
});
