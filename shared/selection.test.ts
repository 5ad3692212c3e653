import { describe, expect, it } from "vitest";
import { Reason } from "./conditions.ts";
import type { DgdVerdict } from "./decide.ts";
import { NAMED_IN_MESSAGE, selectDgds, selectionVerdict } from "./selection.ts";

const eligible = (...namespaces: string[]): DgdVerdict => ({ eligible: true, namespaces });
const notPod: DgdVerdict = {
  eligible: false,
  reason: Reason.DiscoveryModeNotPod,
  message: "discovery mode is container",
};

describe("selectDgds", () => {
  const dgd = (name: string, labels?: Record<string, string>) => ({ metadata: { name, labels } });
  it("keeps the DGDs the selector matches, by name", () => {
    const dgds = [dgd("c", { pool: "a" }), dgd("a", { pool: "a" }), dgd("b", { pool: "b" }), dgd("d")];
    expect(selectDgds({ matchLabels: { pool: "a" } }, dgds).map((d) => d.metadata.name)).toEqual(["a", "c"]);
    expect(selectDgds({ matchExpressions: [{ key: "pool", operator: "DoesNotExist" }] }, dgds)).toEqual([dgd("d")]);
    expect(selectDgds({}, dgds).map((d) => d.metadata.name)).toEqual(["a", "b", "c", "d"]);
  });
});

describe("selectionVerdict", () => {
  it("is the union of the eligible DGDs' worker namespaces, sorted, each once; the others named with their reasons", () => {
    expect(
      selectionVerdict([
        { name: "b", verdict: eligible("team-b", "shared") },
        { name: "c", verdict: notPod },
        { name: "a", verdict: eligible("team-a-1234", "shared") },
      ]),
    ).toEqual({
      eligible: true,
      namespaces: ["shared", "team-a-1234", "team-b"],
      selected: 3,
      eligibleCount: 2,
      excluded: [{ name: "c", reason: Reason.DiscoveryModeNotPod, message: "discovery mode is container" }],
    });
  });

  it("is eligible with one eligible DGD among ineligible ones", () => {
    const v = selectionVerdict([
      { name: "a", verdict: notPod },
      { name: "b", verdict: eligible("ns-b") },
    ]);
    expect(v).toMatchObject({ eligible: true, namespaces: ["ns-b"], selected: 2 });
    expect(v.excluded.map((e) => e.name)).toEqual(["a"]);
  });

  it("is not eligible when the selector matches nothing", () => {
    expect(selectionVerdict([])).toEqual({
      eligible: false,
      reason: Reason.NoDGDSelected,
      message: "no DynamoGraphDeployment in this namespace matches spec.dgdSelector",
      selected: 0,
      eligibleCount: 0,
      excluded: [],
    });
  });

  it("is not eligible when no selected DGD is, naming the first few and counting the rest", () => {
    const many = Array.from({ length: NAMED_IN_MESSAGE + 2 }, (_, i) => ({ name: `d${i}`, verdict: notPod }));
    const v = selectionVerdict(many);
    expect(v).toMatchObject({ eligible: false, reason: Reason.NoEligibleDGD, selected: NAMED_IN_MESSAGE + 2 });
    expect(v.excluded).toHaveLength(NAMED_IN_MESSAGE + 2);
    expect(v.eligible === false && v.message).toBe(
      `none of the 7 DynamoGraphDeployments spec.dgdSelector matches is eligible: d0 (DiscoveryModeNotPod), d1 (DiscoveryModeNotPod), d2 (DiscoveryModeNotPod), d3 (DiscoveryModeNotPod), d4 (DiscoveryModeNotPod) and 2 more`,
    );
  });

  it("names the one DGD selected, and every DGD when there are no more than it names", () => {
    const one = selectionVerdict([{ name: "only", verdict: notPod }]);
    expect(one.eligible === false && one.message).toBe(
      "the one DynamoGraphDeployment spec.dgdSelector matches is not eligible: only (DiscoveryModeNotPod)",
    );
    const two = selectionVerdict([
      { name: "b", verdict: notPod },
      { name: "a", verdict: notPod },
    ]);
    expect(two.eligible === false && two.message).toBe(
      "none of the 2 DynamoGraphDeployments spec.dgdSelector matches is eligible: a (DiscoveryModeNotPod), b (DiscoveryModeNotPod)",
    );
  });
});
