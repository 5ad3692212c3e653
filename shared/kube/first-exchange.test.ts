import { describe, expect, it } from "vitest";
import { FirstExchange, untilReadyOrAborted } from "./first-exchange.ts";

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

describe("FirstExchange", () => {
  it("lets the first request to a server go at once and holds the others until it has settled, then none", async () => {
    const gates = new FirstExchange();
    const agent = {};
    const first = gates.enter(agent, "https://10.0.0.1:6443");
    expect(await settled(first.ready)).toBe(true);
    expect(first.done).toBeTypeOf("function");
    const second = gates.enter(agent, "https://10.0.0.1:6443");
    expect(second.done).toBeUndefined();
    expect(await settled(second.ready)).toBe(false);
    first.done!();
    expect(await settled(second.ready)).toBe(true);
    const later = gates.enter(agent, "https://10.0.0.1:6443");
    expect(later.done).toBeUndefined();
    expect(await settled(later.ready)).toBe(true);
  });

  it("keeps servers and agents apart", async () => {
    const gates = new FirstExchange();
    const agent = {};
    gates.enter(agent, "https://10.0.0.1:6443");
    expect(gates.enter(agent, "https://10.0.0.2:6443").done).toBeTypeOf("function");
    expect(gates.enter({}, "https://10.0.0.1:6443").done).toBeTypeOf("function");
  });
});

describe("untilReadyOrAborted", () => {
  const never = new Promise<void>(() => {});

  it("ends the wait when the deadline's signal aborts, or at once when it already has", async () => {
    const controller = new AbortController();
    const waiting = untilReadyOrAborted(never, controller.signal);
    expect(await settled(waiting)).toBe(false);
    controller.abort();
    expect(await settled(waiting)).toBe(true);
    expect(await settled(untilReadyOrAborted(never, controller.signal))).toBe(true);
  });

  it("waits for the gate without a signal, and ends with it", async () => {
    expect(await settled(untilReadyOrAborted(never, undefined))).toBe(false);
    expect(await settled(untilReadyOrAborted(Promise.resolve(), new AbortController().signal))).toBe(true);
  });
});
