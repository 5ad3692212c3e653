// A selection in the status: what computeStatus shows of it, and that the decision made again from
// that status (recordedDecision, which status and the source take instead of reading the DGDs)
// makes the very same status: no run under the recorded decision rewrites it.
import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { carriedStatus } from "../test/carried-status.ts";
import { decideAmong, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { MAX_EXCLUDED_SHOWN } from "./selection.ts";
import { dprView } from "./source-views.ts";
import { recordedDecision, showsDecision } from "./vouched-status.ts";
import { sourcesStatus } from "./status-plan.ts";
import type { LiveObject } from "./apply-plan.ts";

const NOW = "2026-02-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
const settings = DEFAULT_OPERATOR_DEFAULTS;
const MODE = "nvidia.com/dynamo-kube-discovery-mode";
const selecting = dpr({
  uid: UID,
  generation: 2,
  spec: { dgdSelector: { matchLabels: { pool: "a" } } },
});
const pooled = (name: string, container = false) =>
  dgd({ name, labels: { pool: "a" }, ...(container ? { annotations: { [MODE]: "container" } } : {}) });

/** The status the status function writes once the children carry `decision`. */
const statusOf = (decision: Decision) => carriedStatus(selecting, decision, NOW);

describe("a selection in the status", () => {
  it("shows how many DGDs are selected and eligible, and names those left out", () => {
    const decision = decideAmong(selecting, [pooled("a"), pooled("b"), pooled("c", true)], settings);
    const status = statusOf(decision);
    expect(status).toMatchObject({
      selectedDGDs: 3,
      eligibleDGDs: 2,
      excludedDGDs: [
        { name: "c", reason: "DiscoveryModeNotPod", message: expect.stringContaining("container") as unknown },
      ],
      workerNamespaces: ["team-a-a", "team-a-b"],
    });
    expect(status.conditions?.find((c) => c.type === "Eligible")).toMatchObject({
      status: "True",
      message:
        "2 of the 3 DynamoGraphDeployments spec.dgdSelector matches use Kubernetes discovery in Pod mode; the others are listed in status.excludedDGDs",
    });
  });

  it.each([
    ["some left out", [pooled("a"), pooled("c", true)]],
    ["none left out", [pooled("a"), pooled("b")]],
    [
      "more left out than it lists",
      [pooled("a"), ...Array.from({ length: MAX_EXCLUDED_SHOWN + 3 }, (_, i) => pooled(`x${i}`, true))],
    ],
  ])("is made again, the same, from the decision it records (%s)", (_, dgds) => {
    const decision = decideAmong(selecting, dgds, settings);
    const status = statusOf(decision);
    expect(status.excludedDGDs?.length ?? 0).toBeLessThanOrEqual(MAX_EXCLUDED_SHOWN);
    const recorded = recordedDecision({ ...selecting, status }, settings);
    expect(recorded).toBeDefined();
    expect(statusOf(recorded!)).toEqual(status);
  });

  it("changes with the sources when a rollout is written alone: the counts, the DGDs left out, the Eligible message", () => {
    const before = decideAmong(selecting, [pooled("a"), pooled("b"), pooled("c", true)], settings);
    const shown = { ...selecting, status: statusOf(before) };
    const after = decideAmong(selecting, [pooled("a"), pooled("d")], settings) as Extract<
      Decision,
      { action: "apply" }
    >;
    const configMap = { metadata: { resourceVersion: "7", ownerReferences: [] } } as unknown as LiveObject;
    const { status, write } = sourcesStatus(shown, after, configMap);
    expect(write).toBe(true);
    expect(status).toMatchObject({ selectedDGDs: 2, eligibleDGDs: 2, workerNamespaces: ["team-a-a", "team-a-d"] });
    expect(status.excludedDGDs).toBeUndefined();
    expect(status.conditions?.find((c) => c.type === "Eligible")?.message).toBe(
      statusOf(after).conditions?.find((c) => c.type === "Eligible")?.message,
    );
    // Shown as the decision makes it: the source's requeue finds nothing to ask for.
    expect(showsDecision({ ...shown, status }, () => after)).toBe(true);
    expect(showsDecision(shown, () => after)).toBe(false);
  });

  it("counts every DGD left out though it lists only the first ones", () => {
    const dgds = [pooled("a"), ...Array.from({ length: MAX_EXCLUDED_SHOWN + 3 }, (_, i) => pooled(`x${i}`, true))];
    const status = statusOf(decideAmong(selecting, dgds, settings));
    expect(status).toMatchObject({ selectedDGDs: MAX_EXCLUDED_SHOWN + 4, eligibleDGDs: 1 });
    expect(status.excludedDGDs).toHaveLength(MAX_EXCLUDED_SHOWN);
  });

  it("vouches for nothing once the selector is gone, nor without a selection for a selector", () => {
    const status = statusOf(decideAmong(selecting, [pooled("a")], settings));
    expect(recordedDecision({ ...selecting, status }, settings)).toBeDefined();
    const { dgdSelector: _gone, ...spec } = selecting.spec;
    expect(recordedDecision({ ...selecting, spec, status }, settings)).toBeUndefined();
    const { selectedDGDs: _s, eligibleDGDs: _e, ...unselected } = status;
    expect(recordedDecision({ ...selecting, status: unselected }, settings)).toBeUndefined();
  });

  it("is kept in the event source's view, which makes the same recorded decision", () => {
    const dgds = [pooled("a"), ...Array.from({ length: MAX_EXCLUDED_SHOWN + 1 }, (_, i) => pooled(`x${i}`, true))];
    const status = statusOf(decideAmong(selecting, dgds, settings));
    const view = dprView({ ...selecting, status });
    expect(view.status).toMatchObject({ selectedDGDs: MAX_EXCLUDED_SHOWN + 2, eligibleDGDs: 1 });
    const fromView = recordedDecision(view, settings);
    expect(fromView).toBeDefined();
    expect(statusOf(fromView!)).toEqual(status);
  });
});
