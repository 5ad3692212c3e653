import { describe, expect, it } from "vitest";
import { quantityValue, sameQuantity } from "./quantity.ts";

describe("sameQuantity", () => {
  it.each([
    ["1000m", "1", true],
    ["1024Mi", "1Gi", true],
    [2, "2", true],
    ["0.5", "500m", true],
    ["1e3", "1k", true],
    ["1.5Gi", "1536Mi", true],
    ["100m", "0.1", true],
    ["1G", "1Gi", false],
    ["1", "2", false],
    ["abc", "abc", false],
    ["2", 2, true],
    [".5", "500m", true],
    ["1.", "1", true],
    ["1e-3", "1m", true],
    ["25e-1", "2500m", true],
    ["1e0", "1", true],
    ["-1", "-1000m", true],
    ["-1", "1", false],
    ["1", "-1", false],
    ["+1", "1", true],
    ["-.5", "-500m", true],
    ["-0", "0", true],
    [" 1 ", "1", true],
    ["1", "1 ", true],
    ["1 Gi", "1Gi", false],
    ["1Gi", "1 Gi", false],
  ] as const)("%s vs %s is %s", (a, b, expected) => {
    expect(sameQuantity(a, b)).toBe(expected);
  });

  it.each<{ name: string; a: unknown; b: unknown }>([
    { name: "a list holding a quantity, first", a: ["1"], b: "1" },
    { name: "a list holding a quantity, second", a: "1", b: ["1"] },
    { name: "a missing value, first", a: undefined, b: "1" },
    { name: "a missing value, second", a: "1", b: undefined },
    { name: "null, second", a: "0", b: null },
    { name: "a boolean, second", a: "1", b: true },
  ])("is false for $name", ({ a, b }) => {
    expect(sameQuantity(a, b)).toBe(false);
  });
});

describe("quantityValue", () => {
  it.each<{ q: string | number; num: bigint; den: bigint }>([
    { q: "1", num: 1n, den: 1n },
    { q: 2, num: 2n, den: 1n },
    { q: "1.5", num: 15n, den: 10n },
    { q: ".5", num: 5n, den: 10n },
    { q: "-.5", num: -5n, den: 10n },
    { q: "-2", num: -2n, den: 1n },
    { q: "+2", num: 2n, den: 1n },
    { q: "100m", num: 100n, den: 1000n },
    { q: "2Ki", num: 2048n, den: 1n },
    { q: "3k", num: 3000n, den: 1n },
    { q: "1e3", num: 1000n, den: 1n },
    { q: "1E3", num: 1000n, den: 1n },
    { q: "1e-3", num: 1n, den: 1000n },
    { q: "1.5e-2", num: 15n, den: 1000n },
    { q: "1e0", num: 1n, den: 1n },
    { q: " 4 ", num: 4n, den: 1n },
  ])("reads $q as $num/$den", ({ q, num, den }) => {
    expect(quantityValue(q)).toEqual({ num, den });
  });

  it("rejects text that is no quantity", () => {
    expect(quantityValue("1 Gi")).toBeUndefined();
    expect(quantityValue("Gi")).toBeUndefined();
    expect(quantityValue("1.5.5")).toBeUndefined();
    expect(quantityValue("1Ki2")).toBeUndefined();
  });
});
