import { describe, expect, it } from "vitest";
import { selectorMatches, selectorQuery, type LabelSelector } from "./label-selector.ts";

describe("selectorMatches", () => {
  const labels = { app: "llm", tier: "decode", "nvidia.com/pool": "a" };
  it.each<[string, LabelSelector, Record<string, string> | undefined, boolean]>([
    ["an empty selector matches everything", {}, labels, true],
    ["an empty selector matches no labels too", {}, undefined, true],
    ["matchLabels: every pair holds", { matchLabels: { app: "llm", tier: "decode" } }, labels, true],
    ["matchLabels: one value differs", { matchLabels: { app: "llm", tier: "prefill" } }, labels, false],
    ["matchLabels: a key missing", { matchLabels: { zone: "x" } }, labels, false],
    ["matchLabels: a prefixed key", { matchLabels: { "nvidia.com/pool": "a" } }, labels, true],
    ["matchLabels: an empty value needs the key", { matchLabels: { zone: "" } }, labels, false],
    ["matchLabels: an empty value matches it", { matchLabels: { zone: "" } }, { zone: "" }, true],
    [
      "In: the value listed",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["prefill", "decode"] }] },
      labels,
      true,
    ],
    [
      "In: the value not listed",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["prefill"] }] },
      labels,
      false,
    ],
    ["In: the key missing", { matchExpressions: [{ key: "zone", operator: "In", values: ["x"] }] }, labels, false],
    [
      "NotIn: the value not listed",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["prefill"] }] },
      labels,
      true,
    ],
    [
      "NotIn: the value listed",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["decode"] }] },
      labels,
      false,
    ],
    [
      "NotIn: the key missing matches",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["x"] }] },
      labels,
      true,
    ],
    ["Exists: present", { matchExpressions: [{ key: "app", operator: "Exists" }] }, labels, true],
    ["Exists: missing", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, labels, false],
    ["DoesNotExist: missing", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, labels, true],
    ["DoesNotExist: present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, labels, false],
    [
      "matchLabels and expressions all hold",
      { matchLabels: { app: "llm" }, matchExpressions: [{ key: "tier", operator: "In", values: ["decode"] }] },
      labels,
      true,
    ],
    [
      "matchLabels hold, an expression does not",
      { matchLabels: { app: "llm" }, matchExpressions: [{ key: "app", operator: "DoesNotExist" }] },
      labels,
      false,
    ],
    [
      "a label inherited from Object.prototype is no label",
      { matchExpressions: [{ key: "toString", operator: "Exists" }] },
      {},
      false,
    ],
  ])("%s", (_, selector, l, expected) => {
    expect(selectorMatches(selector, l)).toBe(expected);
  });
});

describe("selectorQuery", () => {
  it.each<[LabelSelector, string]>([
    [{}, ""],
    [{ matchLabels: { tier: "decode", app: "llm" } }, "app=llm,tier=decode"],
    [
      { matchExpressions: [{ key: "tier", operator: "In", values: ["prefill", "decode"] }] },
      "tier in (decode,prefill)",
    ],
    [{ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["x"] }] }, "tier notin (x)"],
    [{ matchExpressions: [{ key: "nvidia.com/pool", operator: "Exists" }] }, "nvidia.com/pool"],
    [{ matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, "!zone"],
    [{ matchLabels: { app: "llm" }, matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, "app=llm,!zone"],
  ])("%j → %s", (selector, query) => {
    expect(selectorQuery(selector)).toBe(query);
  });
});
