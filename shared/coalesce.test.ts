import { describe, expect, it } from "vitest";
import { Coalescer } from "./coalesce.ts";

/** A task whose runs are counted and finished by hand, one deferred per run. */
function manual() {
  const runs: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const task = () => new Promise<string>((resolve, reject) => runs.push({ resolve, reject }));
  return { runs, task };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Coalescer", () => {
  it("runs a lone caller's task at once, and forgets the key when it ends", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    const answer = c.run("ns/a", task);
    expect(runs).toHaveLength(1);
    expect(c.size).toBe(1);
    runs[0]!.resolve("v1");
    expect(await answer).toEqual({ value: "v1", ran: true });
    await tick();
    expect(c.size).toBe(0);
  });

  it("tells when the runs in flight or queued for a key have ended, failed or not, and not before", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    let ended = false;
    const none = c.settled("ns/a").then(() => "idle");
    expect(await none).toBe("idle");
    void c.run("ns/a", task).catch(() => undefined);
    const queued = c.run("ns/a", task).catch((err: Error) => err.message);
    void c.settled("ns/a").then(() => (ended = true));
    runs[0]!.resolve("1");
    await tick();
    expect(runs).toHaveLength(2);
    expect(ended).toBe(false);
    runs[1]!.reject(new Error("boom"));
    expect(await queued).toBe("boom");
    await tick();
    expect(ended).toBe(true);
    expect(c.size).toBe(0);
    // A lone run that fails settles it too.
    let alone = false;
    void c.run("ns/a", task).catch(() => undefined);
    void c.settled("ns/a").then(() => (alone = true));
    runs[2]!.reject(new Error("boom"));
    await tick();
    expect(alone).toBe(true);
  });

  it("answers every caller that came during a run with one next run, started after it ended", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    const first = c.run("ns/a", task);
    const later = [c.run("ns/a", task), c.run("ns/a", task), c.run("ns/a", task)];
    await tick();
    expect(runs).toHaveLength(1);
    runs[0]!.resolve("before");
    expect(await first).toEqual({ value: "before", ran: true });
    await tick();
    expect(runs).toHaveLength(2);
    runs[1]!.resolve("after");
    expect(await Promise.all(later)).toEqual([
      { value: "after", ran: true },
      { value: "after", ran: false },
      { value: "after", ran: false },
    ]);
    await tick();
    expect(c.size).toBe(0);
  });

  it("queues a third run for a caller that comes while the queued run is running", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    void c.run("ns/a", task);
    const second = c.run("ns/a", task);
    runs[0]!.resolve("1");
    await tick();
    expect(runs).toHaveLength(2);
    const third = c.run("ns/a", task);
    await tick();
    expect(runs).toHaveLength(2);
    runs[1]!.resolve("2");
    expect(await second).toEqual({ value: "2", ran: true });
    await tick();
    expect(runs).toHaveLength(3);
    runs[2]!.resolve("3");
    expect(await third).toEqual({ value: "3", ran: true });
  });

  it("runs different keys side by side", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    const a = c.run("ns/a", task);
    const b = c.run("ns/b", task);
    expect(runs).toHaveLength(2);
    runs[1]!.resolve("b");
    runs[0]!.resolve("a");
    expect([await a, await b]).toEqual([
      { value: "a", ran: true },
      { value: "b", ran: true },
    ]);
  });

  it("starts the queued run after a failed one, and fails every caller that shares a failed run", async () => {
    const c = new Coalescer<string>();
    const { runs, task } = manual();
    const first = c.run("ns/a", task);
    const later = [c.run("ns/a", task), c.run("ns/a", task)];
    runs[0]!.reject(new Error("409"));
    await expect(first).rejects.toThrow("409");
    await tick();
    expect(runs).toHaveLength(2);
    runs[1]!.reject(new Error("503"));
    for (const l of later) await expect(l).rejects.toThrow("503");
    await tick();
    expect(c.size).toBe(0);
  });

  describe("with a batch period", () => {
    /** A period that ends (or fails) when the test says. */
    function period() {
      let end!: () => void;
      let fail!: (e: Error) => void;
      const done = new Promise<void>((resolve, reject) => ((end = resolve), (fail = reject)));
      return { end, fail, batch: () => done };
    }

    it("starts no run until the period has passed, and lets every caller of the period share the one run", async () => {
      const c = new Coalescer<string>();
      const { runs, task } = manual();
      const p = period();
      const answers = [c.run("ns/a", task, p.batch), c.run("ns/a", task, p.batch), c.run("ns/a", task)];
      await tick();
      // The third asked for no period: it ended the wait.
      expect(runs).toHaveLength(1);
      runs[0]!.resolve("v");
      expect(await Promise.all(answers)).toEqual([
        { value: "v", ran: true },
        { value: "v", ran: false },
        { value: "v", ran: false },
      ]);
      await tick();
      expect(c.size).toBe(0);
    });

    it("runs when the period has passed", async () => {
      const c = new Coalescer<string>();
      const { runs, task } = manual();
      const p = period();
      const answers = [c.run("ns/a", task, p.batch), c.run("ns/a", task, p.batch)];
      await tick();
      expect(runs).toHaveLength(0);
      expect(c.size).toBe(1);
      p.end();
      await tick();
      expect(runs).toHaveLength(1);
      runs[0]!.resolve("v");
      expect(await Promise.all(answers)).toEqual([
        { value: "v", ran: true },
        { value: "v", ran: false },
      ]);
    });

    it("runs when the period fails: a timer's failure only ends the wait", async () => {
      const c = new Coalescer<string>();
      const { runs, task } = manual();
      const p = period();
      const answer = c.run("ns/a", task, p.batch);
      p.fail(new Error("timer"));
      await tick();
      expect(runs).toHaveLength(1);
      runs[0]!.resolve("v");
      expect(await answer).toEqual({ value: "v", ran: true });
    });

    it("queues a caller that comes during a run behind it, without waiting for a period", async () => {
      const c = new Coalescer<string>();
      const { runs, task } = manual();
      const p = period();
      const first = c.run("ns/a", task);
      const second = c.run("ns/a", task, p.batch);
      runs[0]!.resolve("1");
      expect(await first).toEqual({ value: "1", ran: true });
      await tick();
      expect(runs).toHaveLength(2);
      runs[1]!.resolve("2");
      expect(await second).toEqual({ value: "2", ran: true });
    });
  });
});
