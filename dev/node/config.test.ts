import { describe, expect, it } from "vitest";
import { SLOTS, slotOrder } from "./config.ts";

describe("slotOrder", () => {
  it.each([
    [0, [0, 1, 2, 13, 14, 15]],
    [3, [3, 4, 5, 0, 1, 2]],
    [15, [15, 0, 1, 12, 13, 14]],
    [SLOTS, [0, 1, 2, 13, 14, 15]],
    [Number.NaN, [0, 1, 2, 13, 14, 15]],
  ])("from %s tries every slot once, the last claimed last", (next, ends) => {
    const order = slotOrder(next);
    expect([...order.slice(0, 3), ...order.slice(-3)]).toEqual(ends);
    expect(new Set(order).size).toBe(SLOTS);
  });
});
