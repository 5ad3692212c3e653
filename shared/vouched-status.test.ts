import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { carriedStatus } from "../test/carried-status.ts";
import { desiredChildren } from "./apply-plan.ts";
import { decide, type Decision, type DecisionSettings } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { changesNothing, sourcesOnly, type ObservedDpr } from "./vouched-status.ts";

const NOW = "2026-02-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
const settings = DEFAULT_OPERATOR_DEFAULTS;
const rolled = dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } });
const rolledOn = dgd({ componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } });

/** The DynamoPoolRelay as the status function leaves it once the children carry the decision for `source`. */
function settledOn(source: unknown, generation = 3): ObservedDpr {
  const d = dpr({ generation, uid: UID });
  const status = carriedStatus(d, decide(d, source, settings), NOW);
  return { ...d, status };
}

/** The status with condition `type` replaced by `change`, or removed when `change` is undefined. */
const withCondition = (d: ObservedDpr, type: string, change: Record<string, string> | undefined): ObservedDpr => ({
  ...d,
  status: {
    ...d.status,
    conditions: d.status!.conditions!.flatMap((c) =>
      c.type !== type ? [c] : change === undefined ? [] : [{ ...c, ...change }],
    ),
  },
});

const withReady = (d: ObservedDpr, reason: string): ObservedDpr => ({
  ...d,
  status: {
    ...d.status,
    conditions: d.status!.conditions!.map((c) => (c.type === "Ready" ? { ...c, status: "False" as const, reason } : c)),
  },
});

describe("changesNothing: a DGD event the status already reflects", () => {
  const settled = settledOn(rolled);

  it("is nothing to do when the event's DGD decides what the status records (a DGD status rewrite)", () => {
    expect(settled.status?.sourcesRevision).toMatch(/^[0-9a-f]{64}$/);
    const rewritten = {
      ...rolled,
      status: { ...rolled.status, conditions: [{ type: "Ready", status: "True" }], replicas: 7 },
    };
    expect(changesNothing(settled, rewritten, settings)).toBe(true);
  });

  it.each([
    { name: "a worker namespace added (a rollout)", source: rolledOn },
    {
      name: "the DGD switched to etcd discovery",
      source: dgd({
        componentNames: { decode: ["g1-decode-aaaa1111"] },
        annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" },
      }),
    },
    { name: "the DGD deleted (a delete event)", source: undefined },
    { name: "a DGD the schema refuses", source: { ...rolled, spec: { components: "nope" } } },
  ])("is work when $name", ({ source }) => {
    expect(changesNothing(settled, source, settings)).toBe(false);
  });

  it("is work while the status has not observed the current generation", () => {
    expect(changesNothing({ ...settled, metadata: { generation: 4 } }, rolled, settings)).toBe(false);
    expect(changesNothing({ metadata: { generation: 3 } }, rolled, settings)).toBe(false);
  });

  it.each(["Reconciling", "ApplyFailed", "ForeignChild"])("is work while Ready says %s", (reason) => {
    expect(changesNothing(withReady(settled, "ListenerUnavailable"), rolled, settings)).toBe(true);
    expect(changesNothing(withReady(settled, reason), rolled, settings)).toBe(false);
  });

  it("is work when the Relay command differs from the one the connection revision was made with", () => {
    expect(changesNothing(settled, rolled, { ...settings, relayCommand: ["relay", "--serve"] })).toBe(false);
  });

  it("is nothing to do for a DynamoPoolRelay without a generation once the status observed generation 1, the API server's first", () => {
    const withoutGeneration = (d: ObservedDpr): ObservedDpr => ({
      ...d,
      metadata: { ...d.metadata, generation: undefined },
    });
    expect(changesNothing(withoutGeneration(settledOn(rolled, 1)), rolled, settings)).toBe(true);
    expect(changesNothing(withoutGeneration(settledOn(rolled, 2)), rolled, settings)).toBe(false);
  });

  it.each(["Eligible", "Ready"])("is work while the status has no %s condition", (type) => {
    expect(changesNothing(withCondition(settled, type, undefined), rolled, settings)).toBe(false);
  });

  it("is work while Eligible is not True, though the revisions match", () => {
    expect(changesNothing(withCondition(settled, "Eligible", { status: "Unknown" }), rolled, settings)).toBe(false);
  });

  it.each(["sourcesRevision", "connectionRevision"])(
    "is work when the status records another %s than the event's DGD decides",
    (field) => {
      expect(
        changesNothing({ ...settled, status: { ...settled.status, [field]: "0".repeat(64) } }, rolled, settings),
      ).toBe(false);
    },
  );

  it("is work for a spec the core rejects, whatever the status says", () => {
    const invalid = { ...settled, spec: { image: "", clusterID: "dc-1" } };
    expect(changesNothing(invalid, rolled, settings)).toBe(false);
  });
});

describe("changesNothing: withdrawn", () => {
  const gone = settledOn(undefined);

  it("is nothing to do for another delete event once the Service is withdrawn for that reason", () => {
    expect(gone.status?.conditions?.find((c) => c.type === "ServicePublished")?.reason).toBe("Withdrawn");
    expect(changesNothing(gone, undefined, settings)).toBe(true);
  });

  it("is work when the DGD is back, or withdrawn for another reason", () => {
    expect(changesNothing(gone, rolled, settings)).toBe(false);
    expect(
      changesNothing(gone, dgd({ annotations: { "nvidia.com/dynamo-discovery-backend": "etcd" } }), settings),
    ).toBe(false);
  });

  it("is nothing to do when the Service was never ours (ServiceNotOwned), for the same reason", () => {
    expect(
      changesNothing(withCondition(gone, "ServicePublished", { reason: "ServiceNotOwned" }), undefined, settings),
    ).toBe(true);
  });

  it("is work when the status has no ServicePublished condition", () => {
    expect(changesNothing(withCondition(gone, "ServicePublished", undefined), undefined, settings)).toBe(false);
  });

  it("is work while Eligible is not False, though its reason matches", () => {
    expect(changesNothing(withCondition(gone, "Eligible", { status: "Unknown" }), undefined, settings)).toBe(false);
  });

  it("is work while the Service is still being withdrawn", () => {
    const withdrawing = {
      ...gone,
      status: {
        ...gone.status,
        conditions: gone.status!.conditions!.map((c) =>
          c.type === "ServicePublished" ? { ...c, status: "True" as const, reason: "Withdrawing" } : c,
        ),
      },
    };
    expect(changesNothing(withdrawing, undefined, settings)).toBe(false);
  });
});

describe("sourcesOnly: a reconcile asked for by DGD changes that need write only the ConfigMap", () => {
  const settled = settledOn(rolled);
  const applyOf = (source: unknown, s: DecisionSettings = settings) => decide(settled, source, s);
  const vouched = {
    sourcesRevision: (decide(settled, rolled, settings) as Extract<Decision, { action: "apply" }>).sources.revision,
    resourceVersion: "104",
  };

  it("is so for a rollout under a status that vouches for the children: the sources they carry, and the ConfigMap's version that carries them", () => {
    expect(settled.status?.sourcesResourceVersion).toBe("104");
    expect(sourcesOnly(settled, applyOf(rolledOn), ["DGDChanged"])).toEqual(vouched);
    expect(sourcesOnly(settled, applyOf(rolled), ["DGDChanged"])).toEqual(vouched);
  });

  it("is not so under a status that does not say which version of the ConfigMap carried its sources (one written before it said so)", () => {
    const { sourcesResourceVersion: _version, ...older } = settled.status!;
    expect(sourcesOnly({ ...settled, status: older }, applyOf(rolledOn), ["DGDChanged"])).toBeUndefined();
  });

  it("holds because no child but the ConfigMap changes with the worker namespaces", () => {
    const before = desiredChildren(applyOf(rolled) as Extract<Decision, { action: "apply" }>);
    const after = desiredChildren(applyOf(rolledOn) as Extract<Decision, { action: "apply" }>);
    expect(after.map((c) => c.kind)).toEqual(before.map((c) => c.kind));
    after.forEach((child, i) => {
      if (child.kind === "ConfigMap") expect(child).not.toEqual(before[i]);
      else expect(child).toEqual(before[i]);
    });
  });

  it.each([
    { name: "a resync", causes: ["Resync"] as const },
    { name: "drift", causes: ["Drift"] as const },
    { name: "a DynamoPoolRelay change", causes: ["DPRChanged"] as const },
    { name: "a DGD change sharing its run with drift", causes: ["DGDChanged", "Drift"] as const },
    { name: "no request at all", causes: [] as const },
  ])("is not so for $name: every child is read", ({ causes }) => {
    expect(sourcesOnly(settled, applyOf(rolledOn), ["DGDChanged"])).toEqual(vouched);
    expect(sourcesOnly(settled, applyOf(rolledOn), causes)).toBeUndefined();
  });

  it("is not so when the Relay command, and so the connection revision, differs", () => {
    expect(
      sourcesOnly(settled, applyOf(rolledOn, { ...settings, relayCommand: ["relay", "--serve"] }), ["DGDChanged"]),
    ).toBeUndefined();
  });

  it("is not so while the status has not observed the current generation", () => {
    expect(sourcesOnly({ ...settled, metadata: { generation: 4 } }, applyOf(rolledOn), ["DGDChanged"])).toBeUndefined();
  });

  it.each(["Reconciling", "ApplyFailed", "ForeignChild"])("is not so while Ready says %s", (reason) => {
    expect(sourcesOnly(withReady(settled, "RolloutPending"), applyOf(rolledOn), ["DGDChanged"])).toEqual(vouched);
    expect(sourcesOnly(withReady(settled, reason), applyOf(rolledOn), ["DGDChanged"])).toBeUndefined();
  });

  it("is not so while the status says the DGD was not eligible (the children were withdrawn from)", () => {
    const gone = settledOn(undefined);
    expect(sourcesOnly(gone, decide(gone, rolledOn, settings), ["DGDChanged"])).toBeUndefined();
  });

  it("is not so for a decision other than apply", () => {
    expect(sourcesOnly(settled, decide(settled, undefined, settings), ["DGDChanged"])).toBeUndefined();
  });
});
