// The resync tick of the eligibility handler with a fake Context: a kube object that yields listed
// pages and an emit that records, fails for chosen keys, or waits until the test settles it. The
// concurrency is counted, never timed.
import { describe, expect, it } from "vitest";
import { dprTable } from "../../test/builders.ts";
import { idle } from "../../test/idle.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { derivedId, EventType } from "../../shared/events.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { API_VERSION, KIND } from "../../shared/names.ts";
import { slotOf, tickOf, type ResyncCandidate } from "../../shared/resync.ts";
import type { Context } from "../runtime/handler.ts";
import { EMIT_CONCURRENCY, eligibility, PAGE, SOURCE } from "./handler.ts";

const PERIOD = 300;
const SLOTS = 6;
const config = parseConfig({ RESYNC_PERIOD_SECONDS: String(PERIOD), RESYNC_SLOTS: String(SLOTS) }, "eligibility");
const T0 = "2026-03-01T00:00:00Z";
const TICK = tickOf(T0, PERIOD);
const later = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function ping(time: string, id: string): CloudEvent {
  return {
    specversion: "1.0",
    id,
    type: "dev.knative.sources.ping",
    source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
    time,
    extensions: {},
    data: {},
  };
}

/** A DynamoPoolRelay whose generation is not yet observed: due on every tick. */
const fresh = (name: string): ResyncCandidate => ({ metadata: { namespace: "team-a", name, generation: 1 } });
/** An observed DynamoPoolRelay whose key falls in `slot` (its name gets a suffix that puts it there): due only on the ticks of that slot. */
function observed(name: string, slot: number): ResyncCandidate {
  let i = 0;
  while (slotOf(`team-a/${name}-${i}`, SLOTS) !== slot) i++;
  return { metadata: { namespace: "team-a", name: `${name}-${i}`, generation: 2 }, status: { observedGeneration: 2 } };
}
/** An observed DynamoPoolRelay outside this tick's slot whose Ready waits on its Relay pods. */
const settling = (name: string): ResyncCandidate => {
  const o = observed(name, (TICK + 1) % SLOTS);
  return { ...o, status: { ...o.status, conditions: [{ type: "Ready", status: "False", reason: "RolloutPending" }] } };
};
const many = (n: number) => Array.from({ length: n }, (_, i) => fresh(`g${i}`));
const paged = <T>(items: T[], size: number) =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
const subjectOf = (c: ResyncCandidate) => `${c.metadata.namespace}/${c.metadata.name}`;

/** Records the list calls; has the unpaginated LIST too, so a handler using it fails on what it did. */
function fakeKube(pages: ResyncCandidate[][]) {
  const calls: unknown[][] = [];
  const kube = {
    async *listTablePages(...args: unknown[]) {
      calls.push(["listTablePages", ...args]);
      yield* pages.map((page) => dprTable(page));
    },
    async list(...args: unknown[]) {
      calls.push(["list", ...args]);
      return pages.flat();
    },
  };
  return { kube: kube as unknown as KubeClient, calls };
}

/** Records every emit and how many were in flight at once; `answer` decides how each one ends. */
function recorder(answer: (event: CloudEvent) => Promise<void> = async () => {}) {
  const r = {
    tried: [] as CloudEvent[],
    sent: [] as CloudEvent[],
    inFlight: 0,
    maxInFlight: 0,
    async emit(event: CloudEvent): Promise<void> {
      r.tried.push(event);
      r.maxInFlight = Math.max(r.maxInFlight, ++r.inFlight);
      try {
        await answer(event);
        r.sent.push(event);
      } finally {
        r.inFlight--;
      }
    },
  };
  return r;
}

/** Emits that wait until the test accepts them, newest first, so they finish out of order. */
function byHand() {
  const waiting: (() => void)[] = [];
  return {
    answer: () => new Promise<void>((resolve) => waiting.push(resolve)),
    acceptNewest: () => waiting.pop()!(),
  };
}

function context(kube: KubeClient, emits: ReturnType<typeof recorder>): Context {
  return { kube, config, now: () => T0, emit: (e) => emits.emit(e), sleep: async () => {} };
}

const subjects = (events: CloudEvent[]) => events.map((e) => e.subject).sort();
const idsBySubject = (events: CloudEvent[]) =>
  Object.fromEntries(events.map((e): [string, string] => [e.subject!, e.id]));

describe("the resync tick", () => {
  it("lists in pages of PAGE, as Tables, and emits a request for each due DynamoPoolRelay of every page", async () => {
    const due = [
      fresh("new-1"),
      observed("periodic", TICK % SLOTS),
      fresh("new-2"),
      settling("rolling"),
      observed("periodic-b", TICK % SLOTS),
      fresh("new-3"),
    ];
    const quiet = [observed("quiet", (TICK + 1) % SLOTS), observed("quiet", (TICK + 2) % SLOTS)];
    const pages = [[due[0]!, quiet[0]!, due[1]!], [due[2]!, due[3]!], [due[4]!, due[5]!, quiet[1]!], []];
    const { kube, calls } = fakeKube(pages);
    const emits = recorder();
    const result = await eligibility(ping(T0, "p1"), context(kube, emits));
    expect(calls).toEqual([["listTablePages", API_VERSION, KIND, PAGE]]);
    expect(subjects(emits.sent)).toEqual(due.map(subjectOf).sort());
    expect(emits.sent.map((e) => e.data)).toContainEqual({ namespace: "team-a", name: "new-1", cause: "Resync" });
    expect(result).toEqual({
      decision: "Resync",
      fields: { listed: 8, emitted: 6, failed: 0, unobserved: 3, settling: 1, tick: TICK, pages: 4 },
    });
  });

  it("answers a tick over a CRD without the resync's columns with an error naming them, emitting nothing", async () => {
    const kube = {
      async *listTablePages() {
        yield {
          kind: "Table",
          columnDefinitions: [{ name: "Name" }, { name: "Ready" }],
          rows: [{ cells: ["g1", null] }],
        };
      },
    };
    const emits = recorder();
    await expect(eligibility(ping(T0, "p1"), context(kube as unknown as KubeClient, emits))).rejects.toThrow(
      /installed DynamoPoolRelay CRD has no printer column Namespace, Generation, Observed, Reason/,
    );
    expect(emits.tried).toEqual([]);
  });

  it("picks the slot by the ping's event time, not by the clock, one request per due DynamoPoolRelay", async () => {
    // The clock stays at T0 (tick TICK); the ping is the next period's.
    const nextTick = observed("next-tick", (TICK + 1) % SLOTS);
    const page = [observed("this-tick", TICK % SLOTS), nextTick, fresh("new")];
    const next = nextTick.metadata.name;
    const emits = recorder();
    const result = await eligibility(ping(later(PERIOD), "p2"), context(fakeKube([page]).kube, emits));
    expect(emits.sent.map((e) => e.subject).sort()).toEqual(["team-a/new", `team-a/${next}`]);
    expect(emits.sent.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        { namespace: "team-a", name: next, cause: "Resync" },
        { namespace: "team-a", name: "new", cause: "Resync" },
      ]),
    );
    expect(result.fields).toMatchObject({ tick: TICK + 1, emitted: 2 });
    // A redelivery of that ping (same event) emits the same requests with the same ids.
    const again = recorder();
    await eligibility(ping(later(PERIOD), "p2"), context(fakeKube([page]).kube, again));
    expect(idsBySubject(again.sent)).toEqual(idsBySubject(emits.sent));
    expect(idsBySubject(emits.sent)[`team-a/${next}`]).toBe(
      derivedId(SOURCE, `resync-tick-${TICK + 1}`, EventType.Reconcile, "team-a", next),
    );
  });

  it.each([
    { name: "a few pages", total: 3 * EMIT_CONCURRENCY + 5, pageSize: 7 },
    { name: "10,000 DynamoPoolRelays", total: 10_000, pageSize: PAGE },
  ])("keeps EMIT_CONCURRENCY emits in flight, never more, over $name", async ({ total, pageSize }) => {
    const hand = byHand();
    const emits = recorder(hand.answer);
    const done = eligibility(ping(T0, "p1"), context(fakeKube(paged(many(total), pageSize)).kube, emits));
    for (let accepted = 0; accepted < total; accepted++) {
      await idle(() => emits.tried.length);
      expect(emits.inFlight).toBe(Math.min(EMIT_CONCURRENCY, total - accepted));
      hand.acceptNewest();
    }
    const result = await done;
    expect(emits.maxInFlight).toBe(EMIT_CONCURRENCY);
    expect(new Set(emits.sent.map((e) => e.subject)).size).toBe(total);
    expect(result.fields).toEqual({
      listed: total,
      emitted: total,
      failed: 0,
      unobserved: total,
      settling: 0,
      tick: TICK,
      pages: Math.ceil(total / pageSize),
    });
  });

  it("emits every other request when some fail, then answers 503 saying how many of how many failed", async () => {
    const failing = new Set(["team-a/g3", "team-a/g7"]);
    const emits = recorder(async (e) => {
      if (failing.has(e.subject!)) throw new ApiError(503, "SinkRefused", `the sink answered 503 to event ${e.id}`);
    });
    const err = await eligibility(ping(T0, "p1"), context(fakeKube(paged(many(10), 4)).kube, emits)).catch(
      (e: unknown) => e,
    );
    expect(subjects(emits.tried)).toEqual(
      many(10)
        .map((d) => `team-a/${d.metadata.name}`)
        .sort(),
    );
    expect(subjects(emits.sent)).toEqual(["g0", "g1", "g2", "g4", "g5", "g6", "g8", "g9"].map((n) => `team-a/${n}`));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, transient: true });
    expect((err as ApiError).message).toMatch(
      /2 of 10 reconcile requests failed, 8 sent \(10 listed in 3 pages, 10 unobserved\)/,
    );
    expect((err as ApiError).message).toContain("team-a/g3: the sink answered 503");
  });

  it("derives ids from the tick and the key: the same for any run of one tick, others on the next tick", async () => {
    const run = async (event: CloudEvent) => {
      const emits = recorder();
      await eligibility(event, context(fakeKube(paged(many(5), 2)).kube, emits));
      return idsBySubject(emits.sent);
    };
    // Another ping later in the same period, with an id of its own, is the same tick.
    const first = await run(ping(T0, "p1"));
    const again = await run(ping(later(90), "p2"));
    const next = await run(ping(later(PERIOD), "p3"));
    expect(again).toEqual(first);
    expect(Object.keys(next).sort()).toEqual(Object.keys(first).sort());
    for (const [subject, id] of Object.entries(next)) expect(id).not.toBe(first[subject]);
    // What a consumer (or a test) can recompute: source, tick, type and key.
    expect(first["team-a/g0"]).toBe(derivedId(SOURCE, `resync-tick-${TICK}`, EventType.Reconcile, "team-a", "g0"));
  });
});
