import { describe, expect, it } from "vitest";
import {
  candidatesOf,
  changeObserved,
  type TablePage,
  dueOnTick,
  observedInEvent,
  resyncCause,
  resyncReason,
  slotOf,
  tickOf,
  unobserved,
} from "./resync.ts";

const dpr = (generation: number, observed: number | undefined, name = "g1", deleting = false) => ({
  metadata: { name, namespace: "n", generation, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  ...(observed === undefined ? {} : { status: { observedGeneration: observed } }),
});

describe("resyncReason", () => {
  const slot = slotOf("n/g1", 10);
  it.each([
    { name: "a new object without status", d: dpr(1, undefined), tick: slot + 1, expected: "Unobserved" },
    { name: "an edited spec", d: dpr(3, 2), tick: slot + 1, expected: "Unobserved" },
    { name: "an observed object outside its slot", d: dpr(2, 2), tick: slot + 1, expected: undefined },
    { name: "an observed object in its slot", d: dpr(2, 2), tick: slot + 10, expected: "Periodic" },
    {
      name: "an object blocked by a foreign child, outside its slot",
      d: { ...dpr(2, 2), status: { observedGeneration: 2, conditions: [{ type: "Ready", reason: "ForeignChild" }] } },
      tick: slot + 1,
      expected: "Blocked",
    },
    {
      name: "an object blocked by a foreign child among other conditions, outside its slot",
      d: {
        ...dpr(2, 2),
        status: {
          observedGeneration: 2,
          conditions: [{ type: "Accepted" }, { type: "Ready", reason: "ForeignChild" }],
        },
      },
      tick: slot + 1,
      expected: "Blocked",
    },
    {
      name: "an object with another condition of reason ForeignChild, outside its slot",
      d: {
        ...dpr(2, 2),
        status: { observedGeneration: 2, conditions: [{ type: "Accepted", reason: "ForeignChild" }] },
      },
      tick: slot + 1,
      expected: undefined,
    },
    ...["Reconciling", "ServiceNotPublished", "RolloutPending", "ListenerUnavailable"].map((reason) => ({
      name: `an object not Ready with ${reason}, waiting on its children, outside its slot`,
      d: {
        ...dpr(2, 2),
        status: {
          observedGeneration: 2,
          conditions: [
            { type: "Eligible", status: "True", reason: "Eligible" },
            { type: "Ready", status: "False", reason },
          ],
        },
      },
      tick: slot + 1,
      expected: "Settling",
    })),
    ...["NotEligible", "ApplyFailed"].map((reason) => ({
      name: `an object not Ready with ${reason}, which no child's change ends, outside its slot`,
      d: { ...dpr(2, 2), status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "False", reason }] } },
      tick: slot + 1,
      expected: undefined,
    })),
    {
      name: "an object Ready, outside its slot",
      d: {
        ...dpr(2, 2),
        status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "True", reason: "Ready" }] },
      },
      tick: slot + 1,
      expected: undefined,
    },
    {
      name: "an object whose Ready condition has a settling reason but no status, outside its slot",
      d: { ...dpr(2, 2), status: { observedGeneration: 2, conditions: [{ type: "Ready", reason: "RolloutPending" }] } },
      tick: slot + 1,
      expected: undefined,
    },
    {
      name: "an object with another condition of a settling reason, outside its slot",
      d: {
        ...dpr(2, 2),
        status: {
          observedGeneration: 2,
          conditions: [{ type: "ListenerAvailable", status: "False", reason: "RolloutPending" }],
        },
      },
      tick: slot + 1,
      expected: undefined,
    },
    {
      name: "an object settling, in its slot",
      d: {
        ...dpr(2, 2),
        status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "False", reason: "RolloutPending" }] },
      },
      tick: slot + 10,
      expected: "Settling",
    },
  ])("is $expected for $name", ({ d, tick, expected }) => {
    expect(resyncReason(d, tick, 10)).toBe(expected);
  });

  it("reconciles every object exactly once per cycle of slots", () => {
    const names = Array.from({ length: 200 }, (_, i) => `g${i}`);
    const counts = new Map(names.map((n) => [n, 0]));
    for (let tick = 0; tick < 10; tick++)
      for (const n of names) if (resyncReason(dpr(1, 1, n), tick, 10)) counts.set(n, counts.get(n)! + 1);
    expect([...new Set(counts.values())]).toEqual([1]);
    // Spread over the slots, not all in one.
    expect(new Set(names.map((n) => slotOf(`n/${n}`, 10))).size).toBe(10);
  });
});

describe("unobserved", () => {
  it.each([
    { name: "a new object without status", d: dpr(1, undefined), expected: true },
    { name: "an edited spec", d: dpr(3, 2), expected: true },
    { name: "an observed generation", d: dpr(2, 2), expected: false },
    { name: "an edited spec of an object being deleted", d: dpr(3, 2, "g1", true), expected: false },
    { name: "a new object being deleted", d: dpr(1, undefined, "g1", true), expected: false },
  ])("is $expected for $name", ({ d, expected }) => {
    expect(unobserved(d)).toBe(expected);
  });
});

describe("changeObserved: a reconcile asked for a DynamoPoolRelay's change that came late or twice", () => {
  const ready = (reason: string, status = "False") => ({
    observedGeneration: 2,
    conditions: [
      { type: "Eligible", status: "True", reason: "Eligible" },
      { type: "Ready", status, reason },
    ],
  });
  it.each([
    { name: "an observed generation, Ready", d: { ...dpr(2, 2), status: ready("Ready", "True") }, expected: true },
    {
      name: "an observed generation, waiting on its children",
      d: { ...dpr(2, 2), status: ready("RolloutPending") },
      expected: true,
    },
    { name: "an observed generation with no conditions", d: dpr(2, 2), expected: true },
    {
      name: "an observed generation the core rejects (apply's run reports it)",
      d: { ...dpr(2, 2), status: ready("InvalidSpec") },
      expected: false,
    },
    {
      name: "another condition of reason InvalidSpec",
      d: {
        ...dpr(2, 2),
        status: {
          observedGeneration: 2,
          conditions: [
            { type: "Eligible", status: "False", reason: "InvalidSpec" },
            { type: "Ready", status: "True", reason: "Ready" },
          ],
        },
      },
      expected: true,
    },
    { name: "an edited spec", d: { ...dpr(3, 2), status: { ...ready("Ready", "True") } }, expected: false },
    { name: "a new object without status", d: dpr(1, undefined), expected: false },
  ])("is $expected for $name", ({ d, expected }) => {
    expect(changeObserved(d)).toBe(expected);
  });
});

describe("observedInEvent", () => {
  it.each([
    { name: "a delete event, whatever it carries", observed: undefined, deleted: true, expected: true },
    {
      name: "an observed generation (the product's own status write)",
      observed: dpr(2, 2),
      deleted: false,
      expected: true,
    },
    { name: "a status ahead of the generation", observed: dpr(2, 3), deleted: false, expected: true },
    {
      name: "an object being deleted, its edit unobserved",
      observed: dpr(3, 2, "g1", true),
      deleted: false,
      expected: true,
    },
    { name: "an edited spec", observed: dpr(3, 2), deleted: false, expected: false },
    { name: "a new object without status", observed: dpr(1, undefined), deleted: false, expected: false },
    {
      name: "no generation",
      observed: { metadata: {}, status: { observedGeneration: 2 } },
      deleted: false,
      expected: false,
    },
    {
      name: "a generation that is not a number",
      observed: { metadata: { generation: "2" }, status: { observedGeneration: 2 } },
      deleted: false,
      expected: false,
    },
    {
      name: "an observedGeneration that is not a number",
      observed: { metadata: { generation: 2 }, status: { observedGeneration: "2" } },
      deleted: false,
      expected: false,
    },
    {
      name: "a deletionTimestamp that is not a string",
      observed: { metadata: { generation: 3, deletionTimestamp: true }, status: { observedGeneration: 2 } },
      deleted: false,
      expected: false,
    },
    { name: "no object at all", observed: undefined, deleted: false, expected: false },
    { name: "an object that is not one", observed: "g1", deleted: false, expected: false },
  ])("is $expected for $name", ({ observed, deleted, expected }) => {
    expect(observedInEvent(observed, deleted)).toBe(expected);
  });
});

describe("tickOf", () => {
  it("counts periods since the epoch, ignoring jitter within a period", () => {
    expect(tickOf("2026-01-01T00:01:00.400Z", 60)).toBe(tickOf("2026-01-01T00:01:59Z", 60));
    expect(tickOf("2026-01-01T00:02:00Z", 60)).toBe(tickOf("2026-01-01T00:01:00Z", 60) + 1);
  });
});

describe("dueOnTick", () => {
  const tick = slotOf("n/periodic", 10) + 10;
  it("keeps the page's objects that need a reconcile on this tick, in order, with their key and reason", () => {
    const page = [dpr(2, 2, "periodic"), dpr(2, 2, "calm"), dpr(1, undefined, "new")];
    expect(slotOf("n/calm", 10)).not.toBe(tick % 10);
    expect(dueOnTick(page, tick, 10)).toEqual([
      { key: { namespace: "n", name: "periodic" }, reason: "Periodic" },
      { key: { namespace: "n", name: "new" }, reason: "Unobserved" },
    ]);
  });

  it("keys an object listed without a namespace by the empty namespace", () => {
    expect(dueOnTick([{ metadata: { name: "g1", generation: 1 } }], tick, 10)).toEqual([
      { key: { namespace: "", name: "g1" }, reason: "Unobserved" },
    ]);
  });

  it("finds nothing due on an empty page", () => {
    expect(dueOnTick([], tick, 10)).toEqual([]);
  });
});

describe("candidatesOf: a Table page of the printer columns", () => {
  // The columns as the API server answers `kubectl get dpr` from the CRD: Name first, then the CRD's.
  const columns = ["Name", "Ready", "Replicas", "Endpoint", "Reason", "Generation", "Observed", "Namespace", "Age"].map(
    (name) => ({ name, type: "string" }),
  );
  const row = (...cells: unknown[]) => ({ cells });

  // Strictly equal: a field the cell does not give is absent, not present as undefined.
  it("reads each candidate from the cells of the columns it names, absent where the cell is null", () => {
    const table = {
      kind: "Table",
      columnDefinitions: columns,
      rows: [
        row("ready", "True", "2/2", "ready-pool-relay.a.svc:5561", "Ready", 3, 3, "a", "5m"),
        row("new", null, null, null, null, 1, null, "b", "1s"),
        row("rolling", "False", "0/2", null, "RolloutPending", 2, 2, "a", "9s"),
      ],
    };
    expect(candidatesOf(table)).toStrictEqual([
      {
        metadata: { namespace: "a", name: "ready", generation: 3 },
        status: { observedGeneration: 3, conditions: [{ type: "Ready", status: "True", reason: "Ready" }] },
      },
      { metadata: { namespace: "b", name: "new", generation: 1 }, status: {} },
      {
        metadata: { namespace: "a", name: "rolling", generation: 2 },
        status: { observedGeneration: 2, conditions: [{ type: "Ready", status: "False", reason: "RolloutPending" }] },
      },
    ]);
  });

  it("finds the columns by name, in whatever order the Table lists them", () => {
    const shuffled = ["Namespace", "Observed", "Reason", "Name", "Generation", "Ready"].map((name) => ({ name }));
    expect(
      candidatesOf({
        kind: "Table",
        columnDefinitions: shuffled,
        rows: [row("a", 1, "ForeignChild", "g1", 1, "False")],
      }),
    ).toStrictEqual([
      {
        metadata: { namespace: "a", name: "g1", generation: 1 },
        status: { observedGeneration: 1, conditions: [{ type: "Ready", status: "False", reason: "ForeignChild" }] },
      },
    ]);
  });

  it("keeps a Ready condition with only a status or only a reason", () => {
    const [onlyStatus, onlyReason] = candidatesOf({
      kind: "Table",
      columnDefinitions: columns,
      rows: [
        row("s", "Unknown", null, null, null, 1, 1, "a", "1s"),
        row("r", null, null, null, "Reconciling", 1, 1, "a", "1s"),
      ],
    });
    expect(onlyStatus!.status).toStrictEqual({
      observedGeneration: 1,
      conditions: [{ type: "Ready", status: "Unknown" }],
    });
    expect(onlyReason!.status).toStrictEqual({
      observedGeneration: 1,
      conditions: [{ type: "Ready", reason: "Reconciling" }],
    });
  });

  it("takes a generation or observedGeneration that is not an integer as absent", () => {
    const [c] = candidatesOf({
      kind: "Table",
      columnDefinitions: columns,
      rows: [row("g1", null, null, null, null, "2", 1.5, "a", "1s")],
    });
    expect(c).toStrictEqual({ metadata: { namespace: "a", name: "g1" }, status: {} });
  });

  it("refuses rows without the resync's columns, naming each missing one (a CRD older than the function)", () => {
    const older = columns.filter((c) => !["Generation", "Observed", "Namespace"].includes(c.name));
    expect(
      candidatesOf({
        kind: "Table",
        columnDefinitions: columns,
        rows: [row("g1", null, null, null, null, 1, null, "a", "1s")],
      }),
    ).toHaveLength(1);
    expect(() =>
      candidatesOf({ kind: "Table", columnDefinitions: older, rows: [row("g1", null, null, null, null, "1s")] }),
    ).toThrow(
      "the installed DynamoPoolRelay CRD has no printer column Namespace, Generation, Observed, which the resync lists: apply the CRD of this release (crds/)",
    );
  });

  it("refuses a row without a namespace or a name", () => {
    expect(() =>
      candidatesOf({
        kind: "Table",
        columnDefinitions: columns,
        rows: [row("g1", null, null, null, null, 1, null, null, "1s")],
      }),
    ).toThrow("row 0 of the DynamoPoolRelay Table has no namespace or name");
    expect(() =>
      candidatesOf({
        kind: "Table",
        columnDefinitions: columns,
        rows: [
          row("g1", null, null, null, null, 1, null, "a", "1s"),
          row("", null, null, null, null, 1, null, "a", "1s"),
        ],
      }),
    ).toThrow("row 1 of");
  });

  it("finds no candidate on a page without rows, with or without columns", () => {
    expect(candidatesOf({ kind: "Table", columnDefinitions: columns, rows: [] })).toEqual([]);
    expect(candidatesOf({ kind: "Table" })).toEqual([]);
  });

  it("refuses an answer that is not a Table (a List from something that ignored the Accept header), which would read as empty", () => {
    expect(candidatesOf({ kind: "Table", rows: [] })).toEqual([]);
    expect(() =>
      candidatesOf({ kind: "DynamoPoolRelayList", items: [{ metadata: { name: "g1" } }] } as TablePage),
    ).toThrow('the DynamoPoolRelay LIST was answered with "DynamoPoolRelayList", not a meta.k8s.io/v1 Table');
    expect(() => candidatesOf({})).toThrow("answered with undefined");
  });

  it("gives dueOnTick what it decides from: an unobserved row is due, an observed one outside its slot is not", () => {
    const table = {
      kind: "Table",
      columnDefinitions: columns,
      rows: [
        row("g1", null, null, null, null, 1, null, "a", "1s"),
        row("g2", "True", "2/2", null, "Ready", 4, 4, "a", "1h"),
      ],
    };
    const tick = slotOf("a/g2", 10) + 1;
    expect(dueOnTick(candidatesOf(table), tick, 10)).toEqual([
      { key: { namespace: "a", name: "g1" }, reason: "Unobserved" },
    ]);
    expect(dueOnTick(candidatesOf(table), tick - 1, 10)).toEqual([
      { key: { namespace: "a", name: "g1" }, reason: "Unobserved" },
      { key: { namespace: "a", name: "g2" }, reason: "Periodic" },
    ]);
  });
});

describe("resyncCause", () => {
  it("names the tick, so every run of one tick seeds the same ids and the next tick others", () => {
    expect(resyncCause(42)).toBe("resync-tick-42");
    expect(resyncCause(42)).not.toBe(resyncCause(43));
  });
});
