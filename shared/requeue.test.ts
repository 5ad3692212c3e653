import { describe, expect, it } from "vitest";
import { dgd } from "../test/builders.ts";
import {
  convergedPair,
  endpointSlice,
  objectsOf,
  rolled,
  settings,
  storeOf,
  UID,
  type ConvergedPair,
} from "../test/source-pair.ts";
import { decide } from "./decide.ts";
import { MAX_REQUEUE_MS, requeueAction, requeueAfterMs, requeueDue, requeueReason } from "./requeue.ts";
import type { Seen } from "./source-views.ts";
import { planStatus } from "./status-plan.ts";

/** Nothing of the pair since the start, nothing of it waiting to be sent. */
const quiet = { since: 0, sending: 0 };
const judge = (objects: readonly Seen[]) => requeueReason(storeOf(objects).view("team-a/g1")!, settings);
/** An object at a new version with some of its fields replaced. */
const edited = (obj: Seen, edit: Record<string, unknown>, resourceVersion = "500"): Seen => ({
  ...obj,
  ...edit,
  metadata: { ...obj.metadata, resourceVersion, ...((edit["metadata"] as object) ?? {}) },
});
const rolledOn = () => ({
  ...rolled(),
  status: { components: { decode: { componentNames: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } } },
});
/** The pair's objects, with those of `kinds` left out and others replaced. */
function pairWith(p: ConvergedPair, replace: Partial<Record<string, Seen | undefined>>): Seen[] {
  return objectsOf(p).flatMap((o) => (o.kind in replace ? (replace[o.kind] ? [replace[o.kind]!] : []) : [o]));
}
/** The pair with Ready replaced, as a status run that saw it so would have left it. */
function withReady(p: ConvergedPair, ready: { status: "True" | "False"; reason: string }): Seen {
  const status = p.dpr["status"] as { conditions: { type: string }[] };
  return {
    ...p.dpr,
    status: { ...status, conditions: status.conditions.map((c) => (c.type === "Ready" ? { ...c, ...ready } : c)) },
  };
}
/** The pair withdrawn for a missing DGD, its Service gone, as apply leaves it. */
function withdrawn(): Seen[] {
  const p = convergedPair();
  const decision = decide(p.dpr, undefined, settings);
  const observed = {
    serviceAccount: p.children.ServiceAccount,
    role: p.children.Role,
    roleBinding: p.children.RoleBinding,
    configMap: p.children.ConfigMap,
    deployment: p.children.Deployment as never,
    service: undefined,
    endpointSlices: [],
  };
  const { status } = planStatus({ dpr: p.dpr, decision, observed, changed: [], now: "2026-02-01T00:00:00Z" });
  return pairWith(p, {
    DynamoPoolRelay: { ...p.dpr, status },
    DynamoGraphDeployment: undefined,
    Service: undefined,
    EndpointSlice: undefined,
  });
}

describe("requeueReason: the pairs the event source asks a reconcile for", () => {
  const p = convergedPair();
  const { Deployment, Role, ConfigMap, Service } = p.children;
  it.each([
    { name: "converged, Ready and showing its DGD", objects: () => objectsOf(p), expected: undefined },
    {
      name: "its DGD's status rewritten with nothing the product decides",
      objects: () =>
        pairWith(p, {
          DynamoGraphDeployment: edited(p.dgd, { status: { ...(p.dgd["status"] as object), replicas: 7 } }),
        }),
      expected: undefined,
    },
    {
      name: "its DGD rolled on to a new worker namespace (the change's request lost)",
      objects: () => pairWith(p, { DynamoGraphDeployment: rolledOn() }),
      expected: "DGDNotShown",
    },
    {
      name: "its DGD gone (the delete's request lost)",
      objects: () => pairWith(p, { DynamoGraphDeployment: undefined }),
      expected: "DGDNotShown",
    },
    { name: "withdrawn for a missing DGD, still missing", objects: withdrawn, expected: undefined },
    {
      name: "withdrawn for a missing DGD that exists now (the add's request lost)",
      objects: () => [...withdrawn(), p.dgd],
      expected: "DGDNotShown",
    },
    {
      name: "settling",
      objects: () => pairWith(p, { DynamoPoolRelay: withReady(p, { status: "False", reason: "RolloutPending" }) }),
      expected: "Settling",
    },
    {
      name: "a generation unobserved",
      objects: () => pairWith(p, { DynamoPoolRelay: { ...p.dpr, metadata: { ...p.dpr.metadata, generation: 2 } } }),
      expected: "Unobserved",
    },
    // Changed while nobody watched: what the children no longer carry, or show.
    {
      name: "its Deployment scaled to 0 by hand",
      objects: () =>
        pairWith(p, { Deployment: edited(Deployment, { spec: { ...(Deployment["spec"] as object), replicas: 0 } }) }),
      expected: "ChildrenOff",
    },
    {
      name: "its RoleBinding deleted",
      objects: () => pairWith(p, { RoleBinding: undefined }),
      expected: "ChildrenOff",
    },
    {
      name: "its Role's rules edited",
      objects: () => pairWith(p, { Role: edited(Role, { rules: [] }) }),
      expected: "ChildrenOff",
    },
    {
      name: "its Deployment being deleted",
      objects: () =>
        pairWith(p, { Deployment: edited(Deployment, { metadata: { deletionTimestamp: "2026-02-01T00:00:00Z" } }) }),
      expected: "ChildrenOff",
    },
    {
      name: "its Relay pods lost (none ready)",
      objects: () =>
        pairWith(p, {
          Deployment: edited(Deployment, { status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2 } }),
          EndpointSlice: endpointSlice([false, false]),
        }),
      expected: "StatusOff",
    },
    { name: "its EndpointSlice gone", objects: () => pairWith(p, { EndpointSlice: undefined }), expected: "StatusOff" },
    {
      name: "its Service taken over by another controller",
      objects: () =>
        pairWith(p, {
          Service: edited(Service, { metadata: { ownerReferences: [{ uid: "someone", controller: true }] } }),
        }),
      expected: "StatusOff",
    },
    {
      name: "its ConfigMap relabelled (still carrying the document, at another version than the status records)",
      objects: () =>
        pairWith(p, {
          ConfigMap: edited(ConfigMap, { metadata: { labels: { ...ConfigMap.metadata.labels, extra: "x" } } }),
        }),
      expected: "StatusOff",
    },
    {
      name: "its Deployment rewritten by its controller with nothing status shows",
      objects: () =>
        pairWith(p, {
          Deployment: edited(Deployment, {
            status: { ...(Deployment["status"] as object), conditions: [{ type: "Available", status: "True" }] },
          }),
        }),
      expected: undefined,
    },
  ])("$name: $expected", ({ objects, expected }) => {
    expect(judge(objects())).toBe(expected);
  });

  it("never asks for a pair being deleted", () => {
    const settling = withReady(p, { status: "False", reason: "RolloutPending" });
    expect(judge(pairWith(p, { DynamoPoolRelay: settling }))).toBe("Settling");
    expect(
      judge(
        pairWith(p, { DynamoPoolRelay: edited(settling, { metadata: { deletionTimestamp: "2026-02-01T00:00:00Z" } }) }),
      ),
    ).toBeUndefined();
  });

  it("reads the DGD first when it was kept by its version alone (seen before any DynamoPoolRelay paired with it)", () => {
    const [dpr, dgdObj, ...rest] = objectsOf(p);
    expect(judge([dpr!, dgdObj!, ...rest])).toBeUndefined();
    expect(judge([dgdObj!, dpr!, ...rest])).toEqual({ dgd: true, children: [] });
  });

  it("reads again the children seen before the decision their intent comes from was known", () => {
    const [dpr, dgdObj, ...children] = objectsOf(p);
    // Seen before their pair: no decision could judge their intent.
    const judged = judge([...children, dpr!, dgdObj!]);
    expect(judged).toMatchObject({ dgd: false });
    expect((judged as { children: { kind: string }[] }).children.map((c) => c.kind)).toEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ConfigMap",
      "Deployment",
      "Service",
    ]);
  });

  it("judges a child by the decision of the DGD when the status records none yet", () => {
    // Apply wrote the children from the DGD; its status write came after them.
    const unwritten = { ...p.dpr, status: undefined } as Seen;
    const store = storeOf([unwritten, p.dgd, ...Object.values(p.children), p.slice]);
    expect(requeueReason(store.view("team-a/g1")!, settings)).toBe("Unobserved");
    store.take("update", edited(p.dpr, {}, "100"), 1);
    expect(requeueReason(store.view("team-a/g1")!, settings)).toBeUndefined();
  });

  it("tells a foreign child under the pair's labels from its own", () => {
    const foreign = edited(Role, { metadata: { ownerReferences: [{ uid: "someone-else", controller: true }] } });
    expect(judge(pairWith(p, { Role: foreign }))).toBe("StatusOff");
    expect(UID).not.toBe("someone-else");
  });

  it("is unchanged by a DGD of another shape deciding the same", () => {
    const alpha = {
      ...rolled(),
      apiVersion: "nvidia.com/v1alpha1",
      spec: { services: { decode: { componentType: "worker" } } },
    };
    expect(judge(pairWith(p, { DynamoGraphDeployment: alpha }))).toBeUndefined();
    expect(dgd().kind).toBe("DynamoGraphDeployment");
  });
});

describe("requeueDue: a pair is asked for once it has been quiet long enough for its reason", () => {
  it.each([
    // What the world has yet to do: the whole period.
    { reason: "Settling", quietMs: 59_999, due: false },
    { reason: "Settling", quietMs: 60_000, due: true },
    { reason: "Blocked", quietMs: 15_000, due: false },
    { reason: "Blocked", quietMs: 60_000, due: true },
    // What the functions have not acted on: a quarter of it.
    { reason: "DGDNotShown", quietMs: 14_999, due: false },
    { reason: "DGDNotShown", quietMs: 15_000, due: true },
    { reason: "Unobserved", quietMs: 14_999, due: false },
    { reason: "Unobserved", quietMs: 15_000, due: true },
    { reason: "ChildrenOff", quietMs: 14_999, due: false },
    { reason: "ChildrenOff", quietMs: 15_000, due: true },
    { reason: "StatusOff", quietMs: 15_000, due: true },
  ] as const)("$reason, quiet for $quietMs ms: $due", ({ reason, quietMs, due }) => {
    expect(requeueDue(reason, { since: 1_000, sending: 0 }, 1_000 + quietMs, 60_000)).toBe(due);
  });

  it("waits the backed-off period it is given", () => {
    expect(requeueDue("DGDNotShown", quiet, 30_000, 120_000)).toBe(true);
    expect(requeueDue("DGDNotShown", quiet, 29_999, 120_000)).toBe(false);
  });

  it("never asks for a pair while an event of it waits to be delivered, however long ago it changed", () => {
    expect(requeueDue("Settling", quiet, 600_000, 60_000)).toBe(true);
    expect(requeueDue("Settling", { since: 0, sending: 1 }, 600_000, 60_000)).toBe(false);
    expect(requeueDue("DGDNotShown", { since: 0, sending: 2 }, 600_000, 60_000)).toBe(false);
  });
});

describe("requeueAfterMs: a pair asked for again and again waits longer each time", () => {
  it.each([
    [0, 60_000],
    [1, 120_000],
    [2, 240_000],
    [3, 480_000],
    [4, MAX_REQUEUE_MS],
    [40, MAX_REQUEUE_MS],
  ])("after %i requests: %i ms", (asked, expected) => {
    expect(requeueAfterMs(60_000, asked)).toBe(expected);
  });

  it("never waits less than the period it was given, however long", () => {
    expect(requeueAfterMs(3_600_000, 0)).toBe(3_600_000);
    expect(requeueAfterMs(3_600_000, 5)).toBe(3_600_000);
  });
});

describe("requeueAction: what the requeue does with a pair on a tick", () => {
  const reread = { dgd: true, children: [] };
  const at = (quietMs: number, extra: Partial<{ sending: number; leading: boolean }> = {}) => ({
    sending: 0,
    now: 100_000 + quietMs,
    requeueMs: 60_000,
    leading: true,
    ...extra,
  });
  const pair = (judged: Parameters<typeof requeueAction>[0]["judged"], asked = 0) => ({
    since: 100_000,
    asked,
    ...(judged === undefined ? {} : { judged }),
  });
  it.each([
    {
      name: "busy within the shortest wait: not even judged",
      pair: pair(undefined),
      state: at(14_999),
      expected: { do: "wait" },
    },
    {
      name: "events of it still queued, however long ago it changed",
      pair: pair(undefined),
      state: at(600_000, { sending: 1 }),
      expected: { do: "wait" },
    },
    {
      name: "quiet and not judged since its last change",
      pair: pair(undefined),
      state: at(15_000),
      expected: { do: "judge" },
    },
    { name: "judged converged", pair: pair(null), state: at(600_000), expected: { do: "nothing" } },
    {
      name: "judged unreadable from what is kept",
      pair: pair(reread),
      state: at(15_000),
      expected: { do: "reread", what: reread },
    },
    {
      name: "off its DGD, quiet a quarter of the period",
      pair: pair("DGDNotShown"),
      state: at(15_000),
      expected: { do: "ask", reason: "DGDNotShown" },
    },
    {
      name: "settling, quiet only a quarter of the period",
      pair: pair("Settling"),
      state: at(15_000),
      expected: { do: "wait" },
    },
    {
      name: "settling, quiet the whole period",
      pair: pair("Settling"),
      state: at(60_000),
      expected: { do: "ask", reason: "Settling" },
    },
    {
      name: "children off, asked once already: twice as long",
      pair: pair("ChildrenOff", 1),
      state: at(29_999),
      expected: { do: "wait" },
    },
    {
      name: "children off, asked once already, quiet long enough",
      pair: pair("ChildrenOff", 1),
      state: at(30_000),
      expected: { do: "ask", reason: "ChildrenOff" },
    },
    {
      name: "off, on a replica that does not lead",
      pair: pair("ChildrenOff"),
      state: at(600_000, { leading: false }),
      expected: { do: "wait" },
    },
    {
      name: "unreadable, on a replica that does not lead: a standby keeps its judgments ready",
      pair: pair(reread),
      state: at(15_000, { leading: false }),
      expected: { do: "reread", what: reread },
    },
  ] as const)("$name: $expected.do", ({ pair: p, state, expected }) => {
    expect(requeueAction(p, state)).toEqual(expected);
  });
});
