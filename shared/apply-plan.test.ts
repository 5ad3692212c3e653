import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { appliedHashes, liveChildren, type LiveInput } from "../test/live-children.ts";
import {
  absentWhenPlanned,
  childState,
  childrenNeverShown,
  foreignChildren,
  isSubset,
  planAbsent,
  planApply,
  planSources,
  NO_STORED_VERSION,
  reflectsDecision,
  withAppliedHash,
  writeWaves,
  APPLIED_HASH,
  type LiveObject,
} from "./apply-plan.ts";
import { decide, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import { renderChildren, type KubeObject } from "./render/index.ts";

const UID = "11111111-2222-3333-4444-555555555555";
const apply = decide(dpr(), dgd(), DEFAULT_OPERATOR_DEFAULTS) as Extract<Decision, { action: "apply" }>;
const desired = renderChildren(apply).map(withAppliedHash);
/** The children as the API server returns them once `children` (of `decision`) were applied. */
const liveAfter = (decision = apply, children = desired, extra: Partial<LiveInput> = {}) =>
  liveChildren({
    dprUid: UID,
    clusterID: "dc-1",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(children),
    ...extra,
  });
/** The live counterpart of one desired child, a fresh copy each call so a case may change it. */
const asLive = (o: KubeObject): LiveObject => liveAfter()[o.kind as keyof ReturnType<typeof liveChildren>];

describe("isSubset", () => {
  it.each([
    { name: "equal scalars", d: 1, l: 1, expected: true },
    { name: "different scalars", d: "a", l: "b", expected: false },
    { name: "extra live fields", d: { a: 1 }, l: { a: 1, b: 2 }, expected: true },
    { name: "a missing field", d: { a: 1 }, l: {}, expected: false },
    { name: "arrays of different length", d: [1], l: [1, 2], expected: false },
    { name: "arrays elementwise", d: [{ a: 1 }], l: [{ a: 1, b: 2 }], expected: true },
    { name: "an omitted zero value", d: { flag: false, n: 0, s: "" }, l: {}, expected: true },
    { name: "a live value where desired is zero", d: { flag: false }, l: { flag: true }, expected: false },
  ])("is $expected for $name", ({ d, l, expected }) => {
    expect(isSubset(d, l)).toBe(expected);
  });
});

describe("childState", () => {
  const cm = desired.find((o) => o.kind === "ConfigMap")!;
  it.each([
    { name: "absent", live: undefined, expected: "absent" },
    {
      name: "current, as the API server returns it (its metadata, managedFields)",
      live: asLive(cm),
      expected: "current",
    },
    {
      name: "foreign: no controller",
      live: { ...asLive(cm), metadata: { ...asLive(cm).metadata, ownerReferences: [] } },
      expected: "foreign",
    },
    { name: "stale: edited by someone", live: { ...asLive(cm), data: { "sources.json": "{}" } }, expected: "stale" },
    {
      name: "stale: older intent",
      live: { ...asLive(cm), metadata: { ...asLive(cm).metadata, annotations: { [APPLIED_HASH]: "old" } } },
      expected: "stale",
    },
    {
      name: "stale: a label removed",
      live: { ...asLive(cm), metadata: { ...asLive(cm).metadata, labels: {} } },
      expected: "stale",
    },
    {
      name: "stale: being deleted",
      live: { ...asLive(cm), metadata: { ...asLive(cm).metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } },
      expected: "stale",
    },
  ])("is $expected when $name", ({ live, expected }) => {
    expect(childState(cm, live, UID)).toBe(expected);
  });

  it("takes every child as current as the API server returns it: defaults filled in, zero values left out, its own metadata", () => {
    const live = liveAfter();
    expect(desired.map((o) => [o.kind, childState(o, live[o.kind as keyof typeof live], UID)])).toEqual([
      ["ServiceAccount", "current"],
      ["Role", "current"],
      ["RoleBinding", "current"],
      ["ConfigMap", "current"],
      ["Deployment", "current"],
      ["Service", "current"],
    ]);
  });

  it("takes resources the API server normalised (1000m as 1, 1024Mi as 1Gi, 4096Mi as 4Gi) as current", () => {
    const resources = { requests: { cpu: "1000m", memory: "1024Mi" }, limits: { memory: "4096Mi" } };
    const decision = decide(dpr({ spec: { resources } }), dgd(), DEFAULT_OPERATOR_DEFAULTS) as typeof apply;
    const children = renderChildren(decision).map(withAppliedHash);
    const deployment = children.find((o) => o.kind === "Deployment")!;
    const live = liveAfter(decision, children, {
      resources: { limits: { memory: "4Gi" }, requests: { cpu: "1", memory: "1Gi" } },
    });
    expect(childState(deployment, live.Deployment, UID)).toBe("current");
    // A limit the server holds at another value is an edit to revert.
    const edited = liveAfter(decision, children, {
      resources: { limits: { memory: "4G" }, requests: { cpu: "1", memory: "1Gi" } },
    });
    expect(childState(deployment, edited.Deployment, UID)).toBe("stale");
  });

  it("changes the hash when intent drops a field, so removals are applied", () => {
    const withSelector = decide(
      dpr({ spec: { nodeSelector: { pool: "cpu" } } }),
      dgd(),
      DEFAULT_OPERATOR_DEFAULTS,
    ) as typeof apply;
    const before = liveAfter(withSelector, renderChildren(withSelector).map(withAppliedHash))
      .Deployment as LiveObject & { spec: { template: { spec: Record<string, unknown> } } };
    before.spec.template.spec["nodeSelector"] = { pool: "cpu" };
    const after = desired.find((o) => o.kind === "Deployment")!;
    // Everything the new intent sets is still there: only the hash tells the removal.
    const { metadata: _, ...body } = after;
    expect(isSubset(body, before)).toBe(true);
    expect(childState(after, before, UID)).toBe("stale");
  });
});

describe("planApply", () => {
  it("applies only missing and stale children and skips foreign ones", () => {
    const live = desired.map((o) => asLive(o));
    live[3] = undefined as never; // ConfigMap missing
    (live[4]!["spec"] as { replicas: number }).replicas = 7; // Deployment scaled by someone else
    live[5] = { ...live[5]!, metadata: { name: "g1-pool-relay" } }; // Service not ours
    const plan = planApply(desired, live, UID);
    expect(plan.apply.map((a) => [a.object.kind, a.force])).toEqual([
      ["ConfigMap", false],
      ["Deployment", true],
    ]);
    // The stale Deployment is written only over the version read; the missing ConfigMap has none to pin.
    expect(plan.apply.map((a) => (a.object.metadata as { resourceVersion?: string }).resourceVersion)).toEqual([
      undefined,
      "105",
    ]);
    expect(plan.unchanged).toEqual(["ServiceAccount", "Role", "RoleBinding"]);
    expect(plan.skipped).toEqual([
      { kind: "Service", reason: "Service g1-pool-relay exists and is not controlled by this DynamoPoolRelay" },
    ]);
  });

  it.each([
    { foreign: "ServiceAccount", applied: ["Role", "ConfigMap"], blocked: ["RoleBinding", "Deployment", "Service"] },
    { foreign: "Role", applied: ["ServiceAccount", "ConfigMap"], blocked: ["RoleBinding", "Deployment", "Service"] },
    { foreign: "RoleBinding", applied: ["ServiceAccount", "Role", "ConfigMap"], blocked: ["Deployment", "Service"] },
    { foreign: "ConfigMap", applied: ["ServiceAccount", "Role", "RoleBinding"], blocked: ["Deployment", "Service"] },
    { foreign: "Deployment", applied: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap"], blocked: ["Service"] },
    { foreign: "Service", applied: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment"], blocked: [] },
  ])(
    "with a foreign $foreign, applies none of the children that need it: $blocked",
    ({ foreign, applied, blocked }) => {
      const live = desired.map((o) =>
        o.kind === foreign
          ? { metadata: { name: o.metadata.name, ownerReferences: [{ uid: "someone-else", controller: true }] } }
          : undefined,
      );
      const plan = planApply(desired, live, UID);
      expect(plan.apply.map((a) => a.object.kind)).toEqual(applied);
      expect(plan.skipped.map((s) => s.kind)).toEqual(
        [foreign, ...blocked].sort(
          (a, b) => desired.findIndex((d) => d.kind === a) - desired.findIndex((d) => d.kind === b),
        ),
      );
      // Each blocked child names the foreign one it needs, directly or through another child.
      expect(plan.skipped.slice(1).map((s) => s.reason)).toEqual(
        blocked.map(
          (kind) =>
            `${kind} g1-pool-relay is not applied: it needs ${foreign} g1-pool-relay, which is not controlled by this DynamoPoolRelay`,
        ),
      );
    },
  );

  it("writes nothing when every child is current", () => {
    expect(
      planApply(
        desired,
        desired.map((o) => asLive(o)),
        UID,
      ).apply,
    ).toEqual([]);
  });
});

describe("reflectsDecision", () => {
  const live = (objs: (LiveObject | undefined)[]) =>
    new Map(["ConfigMap", "Deployment", "Service"].map((k, i) => [k, objs[i]]));
  const [cm, dep, svc] = ["ConfigMap", "Deployment", "Service"].map((k) => asLive(desired.find((o) => o.kind === k)!));
  it("is true when the read children are current, or the Service is foreign", () => {
    expect(reflectsDecision(apply, desired, live([cm, dep, svc]), UID)).toBe(true);
    expect(reflectsDecision(apply, desired, live([cm, dep, { metadata: {} }]), UID)).toBe(true);
  });
  it("counts a foreign child, and the children that need it, as carried as far as they can be", () => {
    const all = new Map(desired.map((o) => [o.kind, asLive(o) as LiveObject | undefined]));
    all.set("ServiceAccount", { metadata: { ownerReferences: [{ uid: "someone-else", controller: true }] } });
    all.set("Deployment", undefined);
    all.set("RoleBinding", undefined);
    all.set("Service", undefined);
    expect(reflectsDecision(apply, desired, all, UID)).toBe(true);
    // The ConfigMap needs nothing foreign: a stale one still counts.
    all.set("ConfigMap", { ...all.get("ConfigMap")!, data: {} });
    expect(reflectsDecision(apply, desired, all, UID)).toBe(false);
    expect(foreignChildren(desired, all, UID)).toEqual(["ServiceAccount g1-pool-relay"]);
  });
  it("is false while a child is missing or stale", () => {
    expect(reflectsDecision(apply, desired, live([cm, undefined, svc]), UID)).toBe(false);
    expect(reflectsDecision(apply, desired, live([{ ...cm!, data: {} }, dep, svc]), UID)).toBe(false);
  });
  it("for a withdrawal, is true once no Service of ours remains", () => {
    const withdraw = decide(dpr(), undefined, DEFAULT_OPERATOR_DEFAULTS);
    expect(reflectsDecision(withdraw, [], live([cm, dep, svc]), UID)).toBe(false);
    expect(reflectsDecision(withdraw, [], live([cm, dep, undefined]), UID)).toBe(true);
    expect(reflectsDecision(withdraw, [], live([cm, dep, { metadata: {} }]), UID)).toBe(true);
  });
});

describe("isSubset, the API server's rewrites", () => {
  it("compares resource quantities by value", () => {
    expect(
      isSubset(
        { resources: { requests: { cpu: "1000m", memory: "1024Mi" } } },
        { resources: { requests: { cpu: "1", memory: "1Gi" } } },
      ),
    ).toBe(true);
    expect(isSubset({ resources: { limits: { memory: "4Gi" } } }, { resources: { limits: { memory: "4G" } } })).toBe(
      false,
    );
  });

  it("matches named lists by name and tolerates entries others added", () => {
    const desired = {
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
    };
    expect(
      isSubset(desired, {
        env: [
          { name: "INJECTED", value: "x" },
          { name: "B", value: "2" },
          { name: "A", value: "1" },
        ],
      }),
    ).toBe(true);
    expect(isSubset(desired, { env: [{ name: "A", value: "1" }] })).toBe(false);
    expect(
      isSubset(desired, {
        env: [
          { name: "A", value: "1" },
          { name: "B", value: "3" },
        ],
      }),
    ).toBe(false);
  });

  it("keeps order and length for lists without names", () => {
    expect(isSubset({ args: ["--a", "--b"] }, { args: ["--b", "--a"] })).toBe(false);
    expect(isSubset({ args: ["--a"] }, { args: ["--a", "--b"] })).toBe(false);
  });
});

describe("isSubset, lists and shapes", () => {
  it.each([
    {
      name: "an empty desired list and a live list of named entries",
      d: [],
      l: [{ name: "INJECTED" }],
      expected: false,
    },
    { name: "an empty desired list and an empty live list", d: [], l: [], expected: true },
    {
      name: "a desired list without names, in order, against live entries that have names",
      d: [{ v: 1 }],
      l: [{ name: "a", v: 1 }],
      expected: true,
    },
    {
      name: "a desired list where only some entries have names, in another order",
      d: [{ name: "A", v: 1 }, { v: 2 }],
      l: [{ v: 2 }, { name: "A", v: 1 }],
      expected: false,
    },
    {
      name: "a desired list where only some entries have names, in the same order",
      d: [{ name: "A", v: 1 }, { v: 2 }],
      l: [{ name: "A", v: 1 }, { v: 2 }],
      expected: true,
    },
    { name: "lists of nulls, in order", d: [null], l: [null], expected: true },
    { name: "a desired list against a missing one", d: { args: ["--a"] }, l: {}, expected: false },
    { name: "a desired list against a string", d: ["--a"], l: "--a", expected: false },
    { name: "lists of the same length differing in the last element", d: [1, 2], l: [1, 3], expected: false },
    { name: "lists of the same length differing in the first element", d: [0, 2], l: [1, 2], expected: false },
    { name: "an object against null", d: { a: 1 }, l: null, expected: false },
    { name: "an object of zero values against a string", d: { flag: false }, l: "x", expected: false },
    { name: "an object of zero values against a list", d: { flag: false }, l: [], expected: false },
    { name: "an object of zero values against an object without them", d: { flag: false }, l: {}, expected: true },
  ])("is $expected for $name", ({ d, l, expected }) => {
    expect(isSubset(d, l)).toBe(expected);
  });
});

describe("withAppliedHash", () => {
  it("adds the intent hash next to the annotations the child already has", () => {
    const obj = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "g1-pool-relay", annotations: { note: "kept" } },
    } as unknown as KubeObject;
    const annotations = (withAppliedHash(obj).metadata as unknown as { annotations: Record<string, string> })
      .annotations;
    expect(annotations).toEqual({ note: "kept", [APPLIED_HASH]: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown });
  });
});

describe("planApply, pinning", () => {
  it("applies a stale child read without a resourceVersion as rendered, unpinned", () => {
    const cm = desired.find((o) => o.kind === "ConfigMap")!;
    const { resourceVersion: _, ...metadata } = asLive(cm).metadata;
    const stale = { ...asLive(cm), metadata, data: {} };
    const plan = planApply([cm], [stale], UID);
    expect(plan.apply).toHaveLength(1);
    expect(plan.apply[0]!.force).toBe(true);
    expect(plan.apply[0]!.object).toStrictEqual(cm);
  });
});

describe("planSources: a rollout that reads no child", () => {
  const kinds = desired.map((d) => d.kind);
  const rolled = decide(
    dpr(),
    dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } }),
    DEFAULT_OPERATOR_DEFAULTS,
  ) as Extract<Decision, { action: "apply" }>;
  const rolledChildren = renderChildren(rolled).map(withAppliedHash);

  it("writes the new sources document alone, forced, over the version of the ConfigMap the status vouched for", () => {
    expect(rolled.sources.revision).not.toBe(apply.sources.revision);
    const plan = planSources(rolledChildren, rolled, {
      sourcesRevision: apply.sources.revision,
      resourceVersion: "104",
    });
    const configMap = rolledChildren.find((d) => d.kind === "ConfigMap")!;
    expect(plan).toEqual({
      apply: [{ object: { ...configMap, metadata: { ...configMap.metadata, resourceVersion: "104" } }, force: true }],
      unchanged: kinds.filter((k) => k !== "ConfigMap"),
      skipped: [],
    });
  });

  it("writes nothing when the ConfigMap carries the decision's sources already", () => {
    expect(
      planSources(rolledChildren, rolled, { sourcesRevision: rolled.sources.revision, resourceVersion: "104" }),
    ).toEqual({ apply: [], unchanged: kinds, skipped: [] });
  });
});

describe("planAbsent: children a status never showed, created unread", () => {
  it("applies every child in order, unforced, over the version no stored object carries, for a DynamoPoolRelay without status", () => {
    const plan = planAbsent(desired);
    expect(
      plan.apply.map((a) => [
        a.object.kind,
        a.force,
        (a.object.metadata as { resourceVersion?: string }).resourceVersion,
      ]),
    ).toEqual(desired.map((d) => [d.kind, false, "1"]));
    expect(
      plan.apply.map((a) => ({ ...a.object, metadata: { ...a.object.metadata, resourceVersion: undefined } })),
    ).toEqual(desired.map((d) => ({ ...d, metadata: { ...d.metadata, resourceVersion: undefined } })));
    expect(plan).toMatchObject({ unchanged: [], skipped: [] });
    expect(NO_STORED_VERSION).toBe("1");
  });

  it.each([
    { name: "a withdrawal's status, no Relay pod", status: { replicas: 0, observedGeneration: 1 }, unread: true },
    { name: "a status that shows sources", status: { sourcesRevision: "abc" }, unread: false },
    { name: "a withdrawal's status with the Relay still running", status: { replicas: 2 }, unread: false },
    { name: "one Relay pod", status: { replicas: 1 }, unread: false },
  ])("after $name: unread $unread", ({ status, unread }) => {
    expect(childrenNeverShown({ status })).toBe(unread);
  });

  it("counts as absent when planned: unpinned, or over the version no stored object carries; not when pinned to one read", () => {
    expect(
      [undefined, NO_STORED_VERSION, "104"].map((resourceVersion) =>
        absentWhenPlanned({ metadata: resourceVersion === undefined ? {} : { resourceVersion } }),
      ),
    ).toEqual([true, true, false]);
  });
});

describe("reflectsDecision and foreignChildren, the edges", () => {
  it("takes a rejected spec as reflected whatever the children: they are left as they are", () => {
    const bad = { ...dpr(), spec: { clusterID: "dc-1" } };
    const reject = decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    expect(reject.action).toBe("reject");
    expect(reflectsDecision(reject, [], new Map(), UID)).toBe(true);
    expect(reflectsDecision(reject, desired, new Map(desired.map((o) => [o.kind, undefined])), UID)).toBe(true);
  });

  it("leaves a foreign Service out of the foreign children: its own condition reports it", () => {
    const all = new Map(desired.map((o) => [o.kind, asLive(o) as LiveObject | undefined]));
    all.set("ConfigMap", { metadata: { ownerReferences: [{ uid: "someone-else", controller: true }] } });
    all.set("Service", { metadata: { ownerReferences: [{ uid: "someone-else", controller: true }] } });
    expect(foreignChildren(desired, all, UID)).toEqual(["ConfigMap g1-pool-relay"]);
  });
});

describe("writeWaves: what is sent at once", () => {
  const plan = (...kinds: string[]) => kinds.map((kind) => ({ object: { kind } }));
  const kindsOf = (waves: { object: { kind: string } }[][]) => waves.map((w) => w.map((a) => a.object.kind));
  it.each([
    {
      name: "a creation: identity and document, the binding, the workload, the Service",
      kinds: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"],
      waves: [["ServiceAccount", "Role", "ConfigMap"], ["RoleBinding"], ["Deployment"], ["Service"]],
    },
    {
      name: "a rollout: the document before the pods that read it",
      kinds: ["ConfigMap", "Deployment"],
      waves: [["ConfigMap"], ["Deployment"]],
    },
    {
      name: "a Role and the Deployment, through the binding the plan leaves as it is",
      kinds: ["Role", "Deployment"],
      waves: [["Role"], ["Deployment"]],
    },
    {
      name: "a ServiceAccount and the Service, through the Deployment",
      kinds: ["ServiceAccount", "Service"],
      waves: [["ServiceAccount"], ["Service"]],
    },
    {
      name: "a Role and the Service, through the binding and the Deployment",
      kinds: ["Role", "Service"],
      waves: [["Role"], ["Service"]],
    },
    {
      name: "children that need nothing the plan writes",
      kinds: ["RoleBinding", "ConfigMap"],
      waves: [["RoleBinding", "ConfigMap"]],
    },
    {
      name: "the Service after the document, through the Deployment the plan leaves as it is",
      kinds: ["RoleBinding", "ConfigMap", "Service"],
      waves: [["RoleBinding", "ConfigMap"], ["Service"]],
    },
    { name: "the Deployment alone", kinds: ["Deployment"], waves: [["Deployment"]] },
    { name: "nothing", kinds: [], waves: [] },
  ])("$name", ({ kinds, waves }) => {
    expect(kindsOf(writeWaves(plan(...kinds)))).toEqual(waves);
  });

  it("keeps each entry as given, forced or not", () => {
    const entries = [
      { object: { kind: "ConfigMap" }, force: true },
      { object: { kind: "Deployment" }, force: false },
    ];
    expect(writeWaves(entries)).toEqual([[entries[0]], [entries[1]]]);
  });
});
