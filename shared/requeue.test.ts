import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { appliedHashes, liveChildren } from "../test/live-children.ts";
import { desiredChildren } from "./apply-plan.ts";
import { decide, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { MAX_REQUEUE_MS, requeueAfterMs, requeueDue, requeueReason } from "./requeue.ts";
import { planStatus } from "./status-plan.ts";

const settings = DEFAULT_OPERATOR_DEFAULTS;
const UID = "11111111-2222-3333-4444-555555555555";
const rolled = dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } });
const rolledOn = dgd({ componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } });

/** The pair as the functions leave it for `source`, with Ready as given. */
function shown(source: unknown, ready: { status: "True" | "False"; reason: string }) {
  const d = dpr({ generation: 3, uid: UID });
  const decision = decide(d, source, settings);
  const live = decision.action === "apply" ? liveChildren({
    dprUid: UID, clusterID: "dc-1", connectionRevision: decision.connectionRevision, sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision as Extract<Decision, { action: "apply" }>)),
  }) : undefined;
  const observed = { serviceAccount: live?.ServiceAccount, role: live?.Role, roleBinding: live?.RoleBinding, configMap: live?.ConfigMap, deployment: live?.Deployment, service: live?.Service, endpointSlices: [] };
  const { status } = planStatus({ dpr: d, decision, observed, changed: [], now: "2026-02-01T00:00:00Z" });
  return { ...d, status: { ...status, conditions: status.conditions!.map((c) => (c.type === "Ready" ? { ...c, ...ready } : c)) } };
}
const ready = shown(rolled, { status: "True", reason: "Ready" });
const withdrawn = shown(undefined, { status: "False", reason: "NotEligible" });
const settling = shown(rolled, { status: "False", reason: "RolloutPending" });
/** Nothing of the pair since the start, nothing of it waiting to be sent. */
const quiet = { since: 0, sending: 0 };

describe("requeueReason: the pairs the event source asks a reconcile for", () => {
  it.each([
    { name: "Ready and showing its DGD", pair: ready, dgd: rolled, expected: undefined },
    { name: "Ready, its DGD's status rewritten with nothing the product decides", pair: ready, dgd: { ...rolled, status: { ...rolled.status, replicas: 7 } }, expected: undefined },
    { name: "Ready but its DGD rolled on to a new worker namespace (the change's request lost)", pair: ready, dgd: rolledOn, expected: "DGDNotShown" },
    { name: "Ready but its DGD gone (the delete's request lost)", pair: ready, dgd: undefined, expected: "DGDNotShown" },
    { name: "withdrawn for a missing DGD that exists now (the add's request lost)", pair: withdrawn, dgd: rolled, expected: "DGDNotShown" },
    { name: "withdrawn, its DGD still missing", pair: withdrawn, dgd: undefined, expected: undefined },
    { name: "Ready, before the source has listed the DGDs", pair: ready, dgd: "unknown", expected: undefined },
    { name: "settling", pair: settling, dgd: rolled, expected: "Settling" },
    { name: "unobserved", pair: { ...ready, metadata: { ...ready.metadata, generation: 4 } }, dgd: rolled, expected: "Unobserved" },
  ])("$name: $expected", ({ pair, dgd: source, expected }) => {
    expect(requeueReason(pair, source, settings)).toBe(expected);
  });

  it("never asks for a pair being deleted", () => {
    expect(requeueReason(settling, rolledOn, settings)).toBe("Settling");
    const deleting = { ...settling, metadata: { ...settling.metadata, deletionTimestamp: "2026-02-01T00:00:00Z" } };
    expect(requeueReason(deleting, rolledOn, settings)).toBeUndefined();
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
