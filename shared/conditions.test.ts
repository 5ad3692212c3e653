// The Ready reasons' table (READY_REASONS), and that each rule that groups reasons reads it.
import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { READY_REASONS, REJECTED_REASONS, readyReason, type ReadyReasonRule } from "./conditions.ts";
import { decide, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { RejectedData } from "./events.ts";
import { resyncReason, slotOf } from "./resync.ts";
import { computeStatus, type StatusInput } from "./status.ts";

const UID = "11111111-2222-3333-4444-555555555555";
const NOW = "2026-02-01T00:00:00Z";

describe("READY_REASONS", () => {
  // reason | vouches for the children | resync on every tick | rollout shown | rejected.v1
  const rows: [string, ReadyReasonRule][] = [
    ["InvalidSpec", { vouches: true, rejected: true }],
    ["NotEligible", { vouches: true, rolledOut: "either" }],
    ["ForeignChild", { vouches: false, resync: "Blocked" }],
    ["ApplyFailed", { vouches: false, rejected: true }],
    ["Reconciling", { vouches: false, resync: "Settling" }],
    ["ServiceNotPublished", { vouches: true, resync: "Settling", rolledOut: "either" }],
    ["RolloutPending", { vouches: true, resync: "Settling", rolledOut: false }],
    ["ListenerUnavailable", { vouches: true, resync: "Settling", rolledOut: true }],
    ["Ready", { vouches: true, rolledOut: true }],
  ];

  it("lists every Ready reason with its rules, in readiness order", () => {
    expect(Object.entries(READY_REASONS)).toStrictEqual(rows);
  });

  it("is the order computeStatus finds them in: each input fixes the first fault of the one before", () => {
    const d = dpr({ generation: 2, uid: UID });
    const apply = decide(d, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    const reject: Decision = { action: "reject", reason: "InvalidSpec", message: "spec.clusterID: required" };
    const ours = { metadata: { ownerReferences: [{ uid: UID, controller: true }] } };
    const rolledOut = {
      metadata: { generation: 1 },
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    };
    const ready: StatusInput = {
      dpr: d,
      decision: apply,
      previous: undefined,
      observedGeneration: 2,
      now: NOW,
      reflects: true,
      foreign: [],
      observed: {
        deployment: rolledOut,
        service: ours,
        endpointSlices: [{ endpoints: [{ conditions: { ready: true } }] }],
      },
    };
    // Faults added one at a time, from the last reason readiness finds to the first.
    const faults: ((i: StatusInput) => StatusInput)[] = [
      (i) => i,
      (i) => ({ ...i, observed: { ...i.observed, endpointSlices: [] } }),
      (i) => ({
        ...i,
        observed: {
          ...i.observed,
          deployment: { ...rolledOut, status: { ...rolledOut.status, availableReplicas: 0 } },
        },
      }),
      (i) => ({ ...i, observed: { ...i.observed, service: undefined } }),
      (i) => ({ ...i, reflects: false }),
      (i) => ({ ...i, applyFailure: "the API server refused a child: spec.replicas: Invalid value" }),
      (i) => ({ ...i, foreign: ["ServiceAccount g1-pool-relay"] }),
      (i) => ({ ...i, decision: withdraw }),
      (i) => ({ ...i, decision: reject }),
    ];
    let input = ready;
    const reasons = faults.map((fault) => {
      input = fault(input);
      return computeStatus(input).conditions?.find((c) => c.type === "Ready")?.reason;
    });
    expect(reasons.reverse()).toStrictEqual(Object.keys(READY_REASONS));
  });

  const slot = slotOf("n/g1", 10);
  it.each(rows)("%s: the resync, the rejected.v1 schema and the lookup follow its rules", (reason, rule) => {
    const candidate = {
      metadata: { namespace: "n", name: "g1", generation: 2 },
      status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "False", reason }] },
    };
    expect(resyncReason(candidate, slot + 1, 10)).toBe(rule.resync);
    expect(
      RejectedData.safeParse({ namespace: "n", name: "g1", uid: UID, generation: 2, reason, message: "m" }).success,
    ).toBe(rule.rejected === true);
    expect(REJECTED_REASONS.includes(reason as never)).toBe(rule.rejected === true);
    expect(readyReason(reason)).toStrictEqual(rule);
  });

  it("has no rule for a reason this product does not write on Ready", () => {
    expect(readyReason("Eligible")).toBeUndefined();
    expect(readyReason("toString")).toBeUndefined();
    expect(readyReason(undefined)).toBeUndefined();
  });
});
