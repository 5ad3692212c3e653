import { describe, expect, it } from "vitest";
import { idle } from "../test/idle.ts";
import { settleBounded } from "./concurrency.ts";

/** Tasks that wait until the test settles them, counting how many run at once. */
function byHand() {
  const waiting: { item: number; settle: (ok: boolean) => void }[] = [];
  const tasks = {
    started: [] as number[],
    inFlight: 0,
    maxInFlight: 0,
    task: (item: number) =>
      new Promise<void>((resolve, reject) => {
        tasks.started.push(item);
        tasks.maxInFlight = Math.max(tasks.maxInFlight, ++tasks.inFlight);
        waiting.push({
          item,
          settle: (ok) => (tasks.inFlight--, ok ? resolve() : reject(new Error(`task ${item} failed`))),
        });
      }),
    /** Settles the most recent task first, so tasks finish out of the order they started in. */
    settleNewest(ok = true): number {
      const newest = waiting.pop()!;
      newest.settle(ok);
      return newest.item;
    },
  };
  return tasks;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("settleBounded", () => {
  it.each([
    { name: "no items", items: [], limit: 3, failing: [], succeeded: 0, failures: [] },
    { name: "fewer items than the limit", items: range(2), limit: 3, failing: [], succeeded: 2, failures: [] },
    { name: "one at a time", items: range(4), limit: 1, failing: [], succeeded: 4, failures: [] },
    { name: "failures among successes", items: range(6), limit: 2, failing: [1, 4], succeeded: 4, failures: [1, 4] },
    { name: "every task failing", items: range(3), limit: 2, failing: [0, 1, 2], succeeded: 0, failures: [0, 1, 2] },
  ])("tries every item and reports the failures: $name", async ({ items, limit, failing, succeeded, failures }) => {
    const r = await settleBounded(items, limit, async (i) => {
      if (failing.includes(i)) throw new Error(`no ${i}`);
    });
    expect(r.succeeded).toBe(succeeded);
    expect(r.failures.map((f) => f.item)).toEqual(failures);
    expect(r.failures.map((f) => (f.error as Error).message)).toEqual(failures.map((i) => `no ${i}`));
  });

  it("counts a task that throws before returning a promise as a failure", async () => {
    const r = await settleBounded([1, 2], 2, (i) => {
      if (i === 1) throw new Error("synchronous");
      return Promise.resolve();
    });
    expect(r).toMatchObject({ succeeded: 1, failures: [{ item: 1 }] });
  });

  it.each([1, 3, 8])("runs at most %i at once, starts the next as soon as one settles, in any order", async (limit) => {
    const tasks = byHand();
    const total = 3 * limit + 2;
    const done = settleBounded(range(total), limit, tasks.task);
    const finished: number[] = [];
    for (let settled = 0; settled < total; settled++) {
      await idle(() => tasks.started.length);
      expect(tasks.inFlight).toBe(Math.min(limit, total - settled));
      finished.push(tasks.settleNewest(settled % 4 !== 3));
    }
    const r = await done;
    expect(tasks.maxInFlight).toBe(limit);
    expect(tasks.started).toEqual(range(total));
    expect(r.succeeded + r.failures.length).toBe(total);
    expect(r.failures.map((f) => f.item)).toEqual(finished.filter((_, i) => i % 4 === 3));
  });

  it("pulls from a lazy source only as slots free up", async () => {
    const tasks = byHand();
    let pulled = 0;
    async function* source() {
      for (const i of range(10)) {
        pulled++;
        yield i;
      }
    }
    const done = settleBounded(source(), 2, tasks.task);
    for (let settled = 0; settled < 10; settled++) {
      await idle(() => tasks.started.length + pulled);
      // The running ones, and at most the one item that waits for a slot.
      expect(pulled).toBeLessThanOrEqual(Math.min(settled + 3, 10));
      tasks.settleNewest();
    }
    expect(await done).toEqual({ succeeded: 10, failures: [] });
  });

  it("lets started tasks finish before it throws the error of a source that fails part-way", async () => {
    const tasks = byHand();
    async function* source() {
      yield 0;
      yield 1;
      throw new Error("the list went stale");
    }
    let inFlightAtOutcome: number | undefined;
    const done = settleBounded(source(), 5, tasks.task).finally(() => (inFlightAtOutcome = tasks.inFlight));
    await idle(() => tasks.started.length);
    tasks.settleNewest();
    tasks.settleNewest();
    await expect(done).rejects.toThrow("the list went stale");
    expect(inFlightAtOutcome).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses the limit %s", async (limit) => {
    const refusal = settleBounded([1], limit, async () => {});
    await expect(refusal).rejects.toThrow(RangeError);
    await expect(refusal).rejects.toThrow(`limit must be a positive integer, got ${limit}`);
  });
});
