import { describe, expect, it } from "vitest";
import { quantityValue, sameQuantity } from "./quantity.ts";

describe("sameQuantity", () => {
  it.each([
    ["1000m", "1", true], ["1024Mi", "1Gi", true], [2, "2", true], ["0.5", "500m", true], ["1e3", "1k", true],
    ["1.5Gi", "1536Mi", true], ["100m", "0.1", true], ["1G", "1Gi", false], ["1", "2", false], ["abc", "abc", false],
  ] as const)("%s vs %s is %s", (a, b, expected) => {
    expect(sameQuantity(a, b)).toBe(expected);
  });

  it("rejects text that is no quantity", () => {
    expect(quantityValue("1 Gi")).toBeUndefined();
    expect(quantityValue("Gi")).toBeUndefined();
  });
});
