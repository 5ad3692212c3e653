import { describe, expect, it } from "vitest";
import { formatIssues } from "../issues.ts";
import { LabelSelector, valuesMessage } from "./label-selector.ts";

const problems = (input: unknown) => {
  const r = LabelSelector.safeParse(input);
  return r.success ? "" : formatIssues(r.error, "dgdSelector");
};

describe("LabelSelector schema", () => {
  it("takes a selector the API server takes: prefixed keys, empty values, each operator", () => {
    const selector = {
      matchLabels: { app: "llm", "nvidia.com/pool": "a", empty: "" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["decode", "prefill"] },
        { key: "zone", operator: "NotIn", values: ["x"] },
        { key: "nvidia.com/pool", operator: "Exists" },
        { key: "legacy", operator: "DoesNotExist", values: [] },
      ],
    };
    expect(LabelSelector.parse(selector)).toEqual(selector);
    expect(LabelSelector.parse({})).toEqual({});
  });

  it.each([
    [
      { matchExpressions: [{ key: "tier", operator: "In", values: [] }] },
      /matchExpressions\[0\]: the operator In needs at least one value/,
    ],
    [{ matchExpressions: [{ key: "tier", operator: "NotIn" }] }, /the operator NotIn needs at least one value/],
    [{ matchExpressions: [{ key: "tier", operator: "Exists", values: ["x"] }] }, /the operator Exists takes no values/],
    [{ matchExpressions: [{ key: "tier", operator: "Equals", values: ["x"] }] }, /matchExpressions\[0\]\.operator/],
    [{ matchExpressions: [{ key: "bad key", operator: "Exists" }] }, /matchExpressions\[0\]\.key/],
    [{ matchExpressions: [{ key: "tier", operator: "In", values: ["not ok"] }] }, /matchExpressions\[0\]\.values\[0\]/],
    [{ matchLabels: { app: "-x" } }, /matchLabels\.app/],
    [{ matchLabels: { app: "v".repeat(64) } }, /matchLabels\.app/],
    [{ matchLabels: { "bad key": "x" } }, /matchLabels: every key of matchLabels must be a label key/],
    [{ matchLabels: { "Bad.Prefix/app": "x" } }, /every key of matchLabels must be a label key/],
    [{ matchLabels: { ["k".repeat(64)]: "x" } }, /every key of matchLabels must be a label key/],
  ])("refuses %j", (input, expected) => {
    expect(problems(input)).toMatch(expected);
  });

  it("words the values rule as its CEL messageExpression does", () => {
    expect(valuesMessage("In")).toBe("the operator In needs at least one value");
    expect(valuesMessage("DoesNotExist")).toBe("the operator DoesNotExist takes no values");
  });
});
