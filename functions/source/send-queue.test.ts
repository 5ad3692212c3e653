import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { SendQueue } from "./send-queue.ts";

const ev = (id: string): CloudEvent => ({
  specversion: "1.0",
  id,
  type: "t",
  source: "s",
  extensions: {},
  data: undefined,
});

/** A sink the test answers by hand: each post waits until the test settles it. */
function manualSink() {
  const calls: { id: string; answer: (status: number | Error) => void }[] = [];
  const post = (event: CloudEvent) =>
    new Promise<number>((resolve, reject) =>
      calls.push({ id: event.id, answer: (s) => (s instanceof Error ? reject(s) : resolve(s)) }),
    );
  return { calls, post };
}
const tick = () => new Promise((r) => setImmediate(r));
const noLog = { refused: () => undefined, retrying: () => undefined, settled: () => undefined };

describe("SendQueue", () => {
  it("sends up to `concurrency` keys at once and the rest as sends end", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 2, noLog, async () => undefined);
    for (const k of ["a", "b", "c"]) q.push(k, ev(k));
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["a", "b"]);
    sink.calls[0]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["a", "b", "c"]);
    sink.calls[1]!.answer(200);
    sink.calls[2]!.answer(204);
    await q.idle();
    expect(q.counts).toMatchObject({ sent: 3, refused: 0 });
  });

  it("keeps one event per key: a newer one replaces the one not sent yet", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 1, noLog, async () => undefined);
    q.push("x", ev("x1"));
    q.push("a", ev("a1"));
    q.push("a", ev("a2"));
    await tick();
    sink.calls[0]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["x1", "a2"]);
    expect(q.counts.superseded).toBe(1);
  });

  it("sends one event of a key at a time, in order: one that comes during a send waits for it", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 4, noLog, async () => undefined);
    q.push("a", ev("a1"));
    await tick();
    q.push("a", ev("a2"));
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["a1"]);
    sink.calls[0]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["a1", "a2"]);
  });

  it.each([500, 502, 503, 404, 429])(
    "tries a send answered %i again, with growing waits, until it is delivered",
    async (status) => {
      const sink = manualSink();
      const waits: number[] = [];
      const q = new SendQueue(sink.post, 1, noLog, async (ms) => void waits.push(ms));
      q.push("a", ev("a1"));
      for (let i = 0; i < 3; i++) {
        await tick();
        sink.calls[i]!.answer(status);
      }
      await tick();
      sink.calls[3]!.answer(new Error("connection reset"));
      await tick();
      sink.calls[4]!.answer(202);
      await q.idle();
      expect(sink.calls.map((c) => c.id)).toEqual(["a1", "a1", "a1", "a1", "a1"]);
      expect(waits).toEqual([100, 200, 400, 800]);
      expect(q.counts).toMatchObject({ sent: 1, failedAttempts: 4 });
    },
  );

  it("gives up a failing send when a newer event of its key comes, and sends that one", async () => {
    const sink = manualSink();
    let wake: () => void = () => undefined;
    const q = new SendQueue(sink.post, 1, noLog, () => new Promise<void>((r) => (wake = r)));
    q.push("a", ev("a1"));
    await tick();
    sink.calls[0]!.answer(503);
    await tick();
    q.push("a", ev("a2"));
    wake();
    await tick();
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["a1", "a2"]);
  });

  it("tries a failing send again however long the sink fails, waiting twice as long each time up to 30 s", async () => {
    // 60 failed attempts: 100 ms doubling to the 30 s cap, then every 30 s, for more than 25 minutes of sleeps.
    const statuses: (number | Error)[] = [
      ...Array.from({ length: 30 }, () => 503),
      ...Array.from({ length: 30 }, () => new Error("ECONNREFUSED")),
      202,
    ];
    let posts = 0;
    const slept: number[] = [];
    const q = new SendQueue(
      () => {
        const s = statuses[posts++]!;
        return s instanceof Error ? Promise.reject(s) : Promise.resolve(s);
      },
      1,
      noLog,
      async (ms) => void slept.push(ms),
    );
    q.push("a", ev("a1"));
    await q.idle();
    expect(q.counts).toMatchObject({ sent: 1, failedAttempts: 60, refused: 0 });
    expect(slept.slice(0, 10)).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000]);
    expect(new Set(slept.slice(9))).toEqual(new Set([30000]));
    expect(slept.reduce((a, b) => a + b, 0)).toBeGreaterThan(25 * 60_000);
  });

  it.each([400, 403, 413, 422])("drops an event the sink refuses with %i, and says so", async (status) => {
    const sink = manualSink();
    const refused: unknown[] = [];
    const q = new SendQueue(sink.post, 1, { ...noLog, refused: (i) => void refused.push(i) }, async () => undefined);
    q.push("a", ev("a1"));
    await tick();
    sink.calls[0]!.answer(status);
    await q.idle();
    expect(refused).toEqual([{ key: "a", id: "a1", type: "t", status }]);
    expect(sink.calls).toHaveLength(1);
    expect(q.counts).toMatchObject({ sent: 0, refused: 1 });
  });

  it("is idle at once when empty, and only once every send has ended", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 1, noLog, async () => undefined);
    await q.idle();
    q.push("a", ev("a1"));
    let idle = false;
    void q.idle().then(() => (idle = true));
    await tick();
    expect(idle).toBe(false);
    sink.calls[0]!.answer(202);
    await tick();
    expect(idle).toBe(true);
  });

  it("holds a key for its period first, sending only the newest of the events that came meanwhile", async () => {
    const sink = manualSink();
    const holds: (() => void)[] = [];
    const q = new SendQueue(sink.post, 4, noLog, () => new Promise<void>((r) => holds.push(r)));
    q.push("d", ev("d1"), 1000);
    q.push("d", ev("d2"), 1000);
    q.push("x", ev("x1"));
    await tick();
    // Not the held key's yet; the other at once.
    expect(sink.calls.map((c) => c.id)).toEqual(["x1"]);
    expect(holds).toHaveLength(1);
    q.push("d", ev("d3"), 1000);
    holds[0]!();
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["x1", "d3"]);
    expect(q.counts.superseded).toBe(2);
  });

  it("is not idle while a key is held", async () => {
    const sink = manualSink();
    const holds: (() => void)[] = [];
    const q = new SendQueue(sink.post, 1, noLog, () => new Promise<void>((r) => holds.push(r)));
    q.push("d", ev("d1"), 1000);
    let idle = false;
    void q.idle().then(() => (idle = true));
    await tick();
    expect(idle).toBe(false);
    holds[0]!();
    await tick();
    sink.calls[0]!.answer(202);
    await tick();
    expect(idle).toBe(true);
  });

  it("holds a key until its last event has left, and tells when it has, once, after a newer one sent behind it", async () => {
    const sink = manualSink();
    const settled: string[] = [];
    const q = new SendQueue(sink.post, 2, { ...noLog, settled: (k) => void settled.push(k) }, async () => undefined);
    q.push("a", ev("a1"));
    q.push("b", ev("b1"));
    await tick();
    expect(q.holds("a")).toBe(true);
    q.push("a", ev("a2"));
    sink.calls[0]!.answer(202);
    await tick();
    // a2 waited for a1: the key still holds an event.
    expect(settled).toEqual([]);
    expect(q.holds("a")).toBe(true);
    sink.calls[1]!.answer(400);
    sink.calls[2]!.answer(202);
    await q.idle();
    expect(sink.calls.map((c) => c.id)).toEqual(["a1", "b1", "a2"]);
    expect(settled.sort()).toEqual(["a", "b"]);
    expect(q.holds("a")).toBe(false);
    expect(q.holds("b")).toBe(false);
  });

  it("sends, for a key's event not sent yet and a newer one, what its merge makes of the two", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 1, noLog, async () => undefined, {
      merge: (pending, next) => ev(`${pending.id}+${next.id}`),
    });
    q.push("x", ev("x1"));
    q.push("a", ev("a1"));
    q.push("a", ev("a2"));
    q.push("a", ev("a3"));
    await tick();
    sink.calls[0]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["x1", "a1+a2+a3"]);
  });

  it("sends each lane's keys up to `concurrency` at once, so a lane whose sends are slow holds no other", async () => {
    const sink = manualSink();
    const q = new SendQueue(sink.post, 1, noLog, async () => undefined, { laneOf: (key) => key.split("/")[0]! });
    for (const k of ["slow/a", "slow/b", "fast/c", "fast/d"]) q.push(k, ev(k));
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["slow/a", "fast/c"]);
    sink.calls[1]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["slow/a", "fast/c", "fast/d"]);
    sink.calls[0]!.answer(202);
    sink.calls[2]!.answer(202);
    await tick();
    expect(sink.calls.map((c) => c.id)).toEqual(["slow/a", "fast/c", "fast/d", "slow/b"]);
  });
});
