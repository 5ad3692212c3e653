import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { appliedHashes, liveChildren } from "../test/live-children.ts";
import { desiredChildren } from "./apply-plan.ts";
import { decide, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import type { LiveObject } from "./apply-plan.ts";
import { deploymentShown, readsService, shownOnly } from "./read-plan.ts";
import { endpointsBehind, observedChildren, planStatus, remembersReads, sourcesStatus } from "./status-plan.ts";
import type { ObservedDeployment } from "./status.ts";

const NOW = "2026-02-01T00:00:00Z";
const d = dpr({ generation: 3 });
const apply = decide(d, dgd(), DEFAULT_OPERATOR_DEFAULTS) as Extract<Decision, { action: "apply" }>;
/** The children as the API server returns them once `decision` was applied. */
const liveInput = (decision: Extract<Decision, { action: "apply" }>) => ({
  dprUid: "11111111-2222-3333-4444-555555555555",
  clusterID: "dc-1",
  connectionRevision: decision.connectionRevision,
  sourcesText: decision.sources.text,
  appliedHash: appliedHashes(desiredChildren(decision)),
});
const liveAfter = (decision: Extract<Decision, { action: "apply" }>) => liveChildren(liveInput(decision));
const live = liveAfter(apply);
const current = {
  serviceAccount: live.ServiceAccount,
  role: live.Role,
  roleBinding: live.RoleBinding,
  configMap: live.ConfigMap,
  deployment: live.Deployment,
  service: live.Service,
  endpointSlices: [],
};
const plan = (overrides: Partial<Parameters<typeof planStatus>[0]> = {}) =>
  planStatus({ dpr: d, decision: apply, observed: current, changed: [], now: NOW, ...overrides });

/** The six children and their keys in the observed world. */
const CHILDREN = [
  { kind: "ServiceAccount", key: "serviceAccount" },
  { kind: "Role", key: "role" },
  { kind: "RoleBinding", key: "roleBinding" },
  { kind: "ConfigMap", key: "configMap" },
  { kind: "Deployment", key: "deployment" },
  { kind: "Service", key: "service" },
] as const;

describe("planStatus", () => {
  it("claims the generation once the children carry its decision", () => {
    expect(plan()).toMatchObject({ reflects: true, write: true, drift: false, status: { observedGeneration: 3 } });
  });

  it("keeps the previous generation while a child is missing, and asks for a reconcile only on that child's event", () => {
    const observed = { ...current, deployment: undefined };
    const withPrevious = { ...d, status: { observedGeneration: 2 } };
    expect(plan({ dpr: withPrevious, observed, changed: ["Deployment"] }).drift).toBe(true);
    expect(plan({ dpr: withPrevious, observed, changed: ["ConfigMap", "Deployment"] }).drift).toBe(true);
    expect(plan({ dpr: withPrevious, observed })).toMatchObject({
      reflects: false,
      drift: false,
      status: { observedGeneration: 2 },
    });
    // Another child's event while apply is still creating the Deployment: apply's own run converges it.
    expect(plan({ dpr: withPrevious, observed, changed: ["ConfigMap"] })).toMatchObject({
      reflects: false,
      drift: false,
    });
    expect(plan({ dpr: withPrevious, observed, changed: ["EndpointSlice"] })).toMatchObject({
      reflects: false,
      drift: false,
    });
  });

  it("reports the sources in effect, not the new decision, while the ConfigMap still holds an older document, and is not Ready", () => {
    // The document a concurrent apply that read an older DGD left behind: other worker namespaces.
    const older = decide(
      d,
      dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } }),
      DEFAULT_OPERATOR_DEFAULTS,
    ) as Extract<Decision, { action: "apply" }>;
    expect(older.workerNamespaces).not.toEqual(apply.workerNamespaces);
    const stale = liveAfter(older).ConfigMap;
    const previous = {
      observedGeneration: 3,
      workerNamespaces: older.workerNamespaces,
      sourcesRevision: older.sources.revision,
      connectionRevision: older.connectionRevision,
    };
    const lagging = plan({
      dpr: { ...d, status: previous },
      observed: { ...current, configMap: stale },
      changed: ["ConfigMap"],
    });
    expect(lagging).toMatchObject({ reflects: false, drift: true });
    expect(lagging.status).toMatchObject({
      workerNamespaces: older.workerNamespaces,
      sourcesRevision: older.sources.revision,
    });
    expect(lagging.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "Reconciling",
    });
    // Once it holds the decision's document, status shows the decision's sources.
    const caughtUp = plan({ dpr: { ...d, status: previous } });
    expect(caughtUp.status).toMatchObject({
      workerNamespaces: apply.workerNamespaces,
      sourcesRevision: apply.sources.revision,
    });
    // The next thing it waits for: the Deployment controller has not reported a rolled-out replica.
    expect(caughtUp.status.conditions!.find((c) => c.type === "Ready")?.reason).toBe("RolloutPending");
  });

  it("records the version of the ConfigMap it found carrying the sources, a rollout's precondition (shared/vouched-status.ts)", () => {
    expect(live.ConfigMap.metadata["resourceVersion"]).toBe("104");
    expect(plan().status.sourcesResourceVersion).toBe("104");
    // Not read (the stored status vouched for it): as stored.
    const { configMap: _c, serviceAccount: _s, role: _r, roleBinding: _b, ...shown } = current;
    expect(
      plan({ dpr: { ...d, status: { ...plan().status, sourcesResourceVersion: "77" } }, observed: shown }).status
        .sourcesResourceVersion,
    ).toBe("77");
    // Someone else's, or missing: no version a rollout may write over.
    const foreignConfigMap = {
      ...live.ConfigMap,
      metadata: { ...live.ConfigMap.metadata, ownerReferences: [{ uid: "someone-else", controller: true }] },
    };
    expect(
      plan({ observed: { ...current, configMap: foreignConfigMap } }).status.sourcesResourceVersion,
    ).toBeUndefined();
    expect(plan({ observed: { ...current, configMap: undefined } }).status.sourcesResourceVersion).toBeUndefined();
  });

  it("never moves observedGeneration backwards", () => {
    expect(plan({ dpr: { ...d, status: { observedGeneration: 5 } } }).status.observedGeneration).toBe(5);
  });

  it("writes nothing when the computed status equals the stored one", () => {
    const first = plan();
    expect(plan({ dpr: { ...d, status: first.status }, now: "2027-01-01T00:00:00Z" }).write).toBe(false);
  });

  it("rewrites, once, a status stored without labelSelector and readyOfDesired (by an older version), so the scale subresource gets its selector", () => {
    const { labelSelector, readyOfDesired, ...older } = plan().status;
    expect({ labelSelector, readyOfDesired }).toEqual({
      labelSelector: "app.kubernetes.io/instance=g1,app.kubernetes.io/name=dynamo-pool-relay",
      readyOfDesired: "0/2",
    });
    const upgraded = plan({ dpr: { ...d, status: older } });
    expect(upgraded).toMatchObject({ write: true, status: { labelSelector, readyOfDesired } });
    expect(plan({ dpr: { ...d, status: upgraded.status } }).write).toBe(false);
  });

  it("shows a reported apply failure for this generation while the children lack the decision, and keeps it", () => {
    const observed = { ...current, deployment: undefined };
    const failure = {
      uid: "11111111-2222-3333-4444-555555555555",
      generation: 3,
      message: "spec.template.spec.tolerations[0].operator: Unsupported value",
    };
    const first = plan({ observed, failure });
    const ready = first.status.conditions!.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({
      status: "False",
      reason: "ApplyFailed",
      message: `the API server refused a child: ${failure.message}`,
    });
    // A later child event carries no report: the failure stays, and no reconcile is asked for.
    const later = plan({ dpr: { ...d, status: first.status }, observed, changed: ["Deployment"] });
    expect(later).toMatchObject({ write: false, drift: false });
    // Another generation's failure, or one from another object, is not shown: the Deployment is simply missing.
    expect(
      plan({ observed, failure: { ...failure, generation: 2 } }).status.conditions!.find((c) => c.type === "Ready")
        ?.reason,
    ).toBe("Reconciling");
    expect(
      plan({ observed, failure: { ...failure, uid: "other" } }).status.conditions!.find((c) => c.type === "Ready")
        ?.reason,
    ).toBe("Reconciling");
    // Once the children carry the decision, it is gone, and the rollout is what Ready waits for.
    expect(
      plan({ dpr: { ...d, status: first.status } }).status.conditions!.find((c) => c.type === "Ready")?.reason,
    ).toBe("RolloutPending");
  });

  it("asks for a reconcile when the Service's event shows a withdrawn Service back, and only then", () => {
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    expect(plan({ decision: withdraw, changed: ["Service"] })).toMatchObject({ reflects: false, drift: true });
    expect(plan({ decision: withdraw, changed: ["Deployment"] })).toMatchObject({ reflects: false, drift: false });
  });

  it("claims a withdrawal only once no Service of ours remains", () => {
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    expect(plan({ decision: withdraw }).status.observedGeneration).toBeUndefined();
    expect(plan({ decision: withdraw, observed: { ...current, service: undefined } }).status.observedGeneration).toBe(
      3,
    );
  });

  it("with a foreign ServiceAccount, claims the generation (nothing more can be applied), asks for no reconcile, and is not Ready, naming it", () => {
    const foreignSa = {
      metadata: { name: "g1-pool-relay", ownerReferences: [{ uid: "someone-else", controller: true }] },
    };
    const observed = {
      ...current,
      serviceAccount: foreignSa,
      roleBinding: undefined,
      deployment: undefined,
      service: undefined,
    };
    const p = plan({
      dpr: { ...d, status: { observedGeneration: 2 } },
      observed,
      changed: ["ServiceAccount", "Deployment", "Service"],
    });
    expect(p).toMatchObject({ reflects: true, drift: false, status: { observedGeneration: 3 } });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ForeignChild",
      message: expect.stringMatching(
        /^ServiceAccount g1-pool-relay exists and is not controlled by this DynamoPoolRelay; nothing that needs it is applied/,
      ) as unknown,
    });
  });

  it("names every foreign child", () => {
    const theirs = { metadata: { ownerReferences: [] } };
    const p = plan({ observed: { ...current, configMap: theirs, role: theirs } });
    expect(p.status.conditions!.find((c) => c.type === "Ready")?.message).toMatch(
      /^Role g1-pool-relay, ConfigMap g1-pool-relay exist and are not controlled/,
    );
  });
  it("is Ready, with the Deployment's counts, once the Deployment rolled out and an endpoint is ready behind our Service", () => {
    const rolled = liveChildren({
      dprUid: "11111111-2222-3333-4444-555555555555",
      clusterID: "dc-1",
      connectionRevision: apply.connectionRevision,
      sourcesText: apply.sources.text,
      appliedHash: appliedHashes(desiredChildren(apply)),
      deploymentStatus: {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
      },
    });
    const p = plan({
      observed: {
        ...current,
        deployment: rolled.Deployment,
        endpointSlices: [{ endpoints: [{ conditions: { ready: true } }] }],
      },
    });
    expect(p).toMatchObject({
      reflects: true,
      status: {
        replicas: 2,
        readyReplicas: 2,
        readyOfDesired: "2/2",
        serviceEndpoint: "g1-pool-relay.team-a.svc:5561",
      },
    });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "Ready",
      message: "the Relay listens at g1-pool-relay.team-a.svc:5561",
    });
  });

  it.each(CHILDREN.filter((c) => c.kind !== "Service"))("names a foreign $kind in Ready", ({ kind, key }) => {
    const p = plan({
      observed: { ...current, [key]: { metadata: { ownerReferences: [{ uid: "someone-else", controller: true }] } } },
    });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      reason: "ForeignChild",
      message: `${kind} g1-pool-relay exists and is not controlled by this DynamoPoolRelay; nothing that needs it is applied (delete or rename it)`,
    });
  });

  it.each(CHILDREN)(
    "does not claim the generation while someone's edit of the $kind is not reverted, and asks for a reconcile on its event",
    ({ kind, key }) => {
      const edited = { ...current[key], metadata: { ...current[key].metadata, labels: {} } };
      const p = plan({
        dpr: { ...d, status: { observedGeneration: 2 } },
        observed: { ...current, [key]: edited },
        changed: [kind],
      });
      expect(p).toMatchObject({ reflects: false, drift: true, status: { observedGeneration: 2 } });
      expect(p.status.conditions!.find((c) => c.type === "Ready")?.reason).toBe("Reconciling");
      const other = kind === "Deployment" ? "Service" : "Deployment";
      expect(
        plan({
          dpr: { ...d, status: { observedGeneration: 2 } },
          observed: { ...current, [key]: edited },
          changed: [other],
        }).drift,
      ).toBe(false);
    },
  );

  it("shows an apply failure stored in the Ready condition wherever Ready is in the list", () => {
    const observed = { ...current, deployment: undefined };
    const message = "the API server refused a child: spec.replicas: Invalid value";
    const conditions = [
      {
        type: "Eligible",
        status: "True" as const,
        observedGeneration: 3,
        lastTransitionTime: NOW,
        reason: "Eligible",
        message: "e",
      },
      {
        type: "Ready",
        status: "False" as const,
        observedGeneration: 3,
        lastTransitionTime: NOW,
        reason: "ApplyFailed",
        message,
      },
    ];
    const p = plan({ dpr: { ...d, status: { observedGeneration: 2, conditions } }, observed, changed: ["Deployment"] });
    expect(p).toMatchObject({ reflects: false, drift: false });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({ reason: "ApplyFailed", message });
  });

  it("does not take a stored Ready condition of this generation that is not an apply failure as one: the missing child is reconciled", () => {
    const observed = { ...current, deployment: undefined };
    const conditions = [
      {
        type: "Ready",
        status: "False" as const,
        observedGeneration: 3,
        lastTransitionTime: NOW,
        reason: "RolloutPending",
        message: "no Relay replica of the current Deployment generation is available yet",
      },
    ];
    const p = plan({ dpr: { ...d, status: { observedGeneration: 3, conditions } }, observed, changed: ["Deployment"] });
    expect(p).toMatchObject({ reflects: false, drift: true });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      reason: "Reconciling",
      message: "the children do not carry the decision for generation 3 yet",
    });
  });

  it("asks for a reconcile when a child event shows a withdrawn Service back, even after an apply of this generation was refused", () => {
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    const failure = {
      uid: "11111111-2222-3333-4444-555555555555",
      generation: 3,
      message: "spec.replicas: Invalid value",
    };
    expect(plan({ decision: withdraw, failure, changed: ["Service"] })).toMatchObject({ reflects: false, drift: true });
  });

  it("on an invalid spec claims the generation and never asks for a reconcile, whatever the children", () => {
    const bad = { ...d, spec: { clusterID: "dc-1" } };
    const reject = decide(bad, dgd(), DEFAULT_OPERATOR_DEFAULTS);
    expect(reject.action).toBe("reject");
    const p = plan({
      dpr: { ...bad, status: { observedGeneration: 2 } },
      decision: reject,
      observed: { ...current, deployment: undefined },
      changed: ["Deployment"],
    });
    expect(p).toMatchObject({ reflects: true, drift: false, status: { observedGeneration: 3 } });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
    });
  });
  it("does not show an apply failure stored for an earlier generation: the new generation's missing child is reconciled", () => {
    const observed = { ...current, deployment: undefined };
    const conditions = [
      {
        type: "Ready",
        status: "False" as const,
        observedGeneration: 2,
        lastTransitionTime: NOW,
        reason: "ApplyFailed",
        message: "the API server refused a child: spec.replicas: Invalid value",
      },
    ];
    const p = plan({ dpr: { ...d, status: { observedGeneration: 2, conditions } }, observed, changed: ["Deployment"] });
    expect(p).toMatchObject({ reflects: false, drift: true });
    expect(p.status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      reason: "Reconciling",
      message: "the children do not carry the decision for generation 3 yet",
    });
  });
});

describe("observedChildren", () => {
  it("finds each kind's live object by the desired child's kind, in any order, and keeps the EndpointSlices", () => {
    const desired = [...CHILDREN].reverse().map(({ kind }) => ({ kind }));
    const objects = desired.map(({ kind }) => live[kind]);
    const slices = [{ endpoints: [] }];
    expect(observedChildren(desired, objects, slices)).toEqual({ ...current, endpointSlices: slices });
  });

  it("leaves a kind that was not read undefined", () => {
    expect(observedChildren([{ kind: "Role" }], [live.Role], [])).toEqual({
      serviceAccount: undefined,
      role: live.Role,
      roleBinding: undefined,
      configMap: undefined,
      deployment: undefined,
      service: undefined,
      endpointSlices: [],
    });
  });
});

// Whether a reconcile that found every child current leaves the status as it is: then apply ends
// without a report (Converged).
describe("planStatus's write for a reconcile (no change named)", () => {
  const shown = { ...d, status: plan().status };
  const carried = (input: Omit<Parameters<typeof planStatus>[0], "changed">) =>
    !planStatus({ ...input, changed: [] }).write;
  it("is none when the stored status is what the children make of it", () => {
    expect(carried({ dpr: shown, decision: apply, observed: current, now: NOW })).toBe(true);
  });

  it.each([
    { name: "no status yet", dpr: d, observed: current },
    {
      name: "a Deployment whose counts moved",
      dpr: shown,
      observed: {
        ...current,
        deployment: {
          ...live.Deployment,
          status: { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 },
        },
      },
    },
    {
      name: "a Ready endpoint the status does not count",
      dpr: shown,
      observed: { ...current, endpointSlices: [{ endpoints: [{ conditions: { ready: true } }] }] },
    },
    { name: "a new generation", dpr: { ...shown, metadata: { ...shown.metadata, generation: 4 } }, observed: current },
  ])("is one with $name", ({ dpr: stored, observed }) => {
    expect(carried({ dpr: stored, decision: apply, observed, now: NOW })).toBe(false);
  });
});

describe("shownOnly: the decision a status run takes from the stored status", () => {
  /** `d` with the status planStatus computes from the current children: it vouches for them. */
  const settled = { ...d, status: plan().status };
  const shown = (
    dprNow: object,
    changed: string[],
    extra: { report?: true } = {},
    settings = DEFAULT_OPERATOR_DEFAULTS,
  ) => shownOnly(dprNow, settings, { changed, ...extra });

  it.each([["Deployment"], ["EndpointSlice"], ["Service"], ["Deployment", "EndpointSlice"]])(
    "is what the DGD decides, without it, on a change of %s under a status that vouches for that decision",
    (...changed) => {
      expect(shown(settled, changed)).toEqual(decide(settled, dgd(), DEFAULT_OPERATOR_DEFAULTS));
    },
  );

  it("is the withdrawal the status shows, without the DGD, once the Service is withdrawn", () => {
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    const withdrawn = {
      ...d,
      status: plan({ decision: withdraw, observed: { ...current, service: undefined } }).status,
    };
    expect(shown(withdrawn, ["Deployment"])).toEqual(decide(withdrawn, undefined, DEFAULT_OPERATOR_DEFAULTS));
    expect(withdraw.action).toBe("withdraw");
    // Still being withdrawn (the Service is there): the withdrawal is apply's to finish.
    const withdrawing = { ...d, status: plan({ decision: withdraw }).status };
    expect(withdrawing.status.conditions?.find((c) => c.type === "ServicePublished")?.reason).toBe("Withdrawing");
    expect(shown(withdrawing, ["Deployment"])).toBeUndefined();
  });

  it.each<{
    name: string;
    dpr: object;
    changed: string[];
    extra?: { report: true };
    settings?: typeof DEFAULT_OPERATOR_DEFAULTS & { relayCommand?: string[] };
  }>([
    { name: "a ConfigMap change (it has events of its own)", dpr: settled, changed: ["ConfigMap"] },
    { name: "a Deployment change merged with a ConfigMap change", dpr: settled, changed: ["Deployment", "ConfigMap"] },
    { name: "a report from apply (no change named)", dpr: settled, changed: [], extra: { report: true } },
    {
      name: "a Deployment change sharing a run with a report from apply (a reported failure, or writes apply did not show)",
      dpr: settled,
      changed: ["Deployment"],
      extra: { report: true },
    },
    {
      name: "a generation the status has not observed",
      dpr: { ...settled, metadata: { ...settled.metadata, generation: 4 } },
      changed: ["Deployment"],
    },
    {
      name: "a status that says the children do not carry the decision yet",
      dpr: {
        ...settled,
        status: {
          ...settled.status,
          conditions: settled.status.conditions?.map((c) => (c.type === "Ready" ? { ...c, reason: "Reconciling" } : c)),
        },
      },
      changed: ["Deployment"],
    },
    {
      name: "a status whose worker namespaces are not those of its sources revision (edited by hand)",
      dpr: { ...settled, status: { ...settled.status, workerNamespaces: ["edited-by-hand"] } },
      changed: ["Deployment"],
    },
    {
      name: "a status that lists no worker namespaces (edited by hand)",
      dpr: { ...settled, status: { ...settled.status, workerNamespaces: undefined } },
      changed: ["Deployment"],
    },
    {
      name: "another Relay command, and so another connection revision",
      dpr: settled,
      changed: ["Deployment"],
      settings: { ...DEFAULT_OPERATOR_DEFAULTS, relayCommand: ["relay", "--serve"] },
    },
    {
      name: "a spec the core rejects",
      dpr: { ...settled, spec: { ...settled.spec, image: "" } },
      changed: ["Deployment"],
    },
  ])("is none, and the DGD and every child are read, on $name", (row) => {
    expect(shown(settled, ["Deployment"])).toBeDefined();
    expect(shown(row.dpr, row.changed, row.extra, row.settings)).toBeUndefined();
  });
});

describe("planStatus over the children status shows only", () => {
  const { serviceAccount: _sa, role: _r, roleBinding: _rb, configMap: _cm, ...shown } = current;

  it("judges only what was read: an unread ServiceAccount is as the status vouched, a missing one (read, absent) is not there", () => {
    expect(plan({ observed: shown })).toMatchObject({ reflects: true, status: { observedGeneration: 3 } });
    expect(plan({ observed: { ...shown, serviceAccount: undefined } })).toMatchObject({ reflects: false });
  });

  it("still sees the Deployment's drift from the decision on its own event", () => {
    const edited = {
      ...shown,
      deployment: {
        ...live.Deployment,
        spec: { ...(live.Deployment as unknown as { spec: object }).spec, replicas: 7 },
      },
    };
    expect(plan({ observed: edited, changed: ["Deployment"] })).toMatchObject({ reflects: false, drift: true });
  });
});

describe("deploymentShown: a Deployment change the stored status shows already", () => {
  type Deployment = LiveObject & ObservedDeployment;
  /** The live Deployment with this status, as the Deployment controller writes it. */
  const deployment = (status?: Record<string, unknown>, edit: (d: Deployment) => Deployment = (x) => x): Deployment =>
    edit(liveChildren({ ...liveInput(apply), ...(status ? { deploymentStatus: status } : {}) }).Deployment);
  /** `d` with the status planStatus computes from the current children and this Deployment. */
  const storedWith = (dep: Deployment, slices = 0, decision: Decision = apply) => ({
    ...d,
    status: planStatus({
      dpr: d,
      decision,
      observed: {
        ...current,
        deployment: dep,
        endpointSlices: [{ endpoints: Array.from({ length: slices }, () => ({ conditions: { ready: true } })) }],
      },
      changed: [],
      now: NOW,
    }).status,
  });
  const readyOf = (stored: { status: { conditions?: { type: string; reason: string }[] } }) =>
    stored.status.conditions?.find((c) => c.type === "Ready")?.reason;
  const created = deployment();
  const progressing = deployment({ observedGeneration: 1, replicas: 0 }, (x) => ({
    ...x,
    metadata: { ...x.metadata, annotations: { ...x.metadata.annotations, "deployment.kubernetes.io/revision": "1" } },
  }));
  const lagging = { observedGeneration: 0, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };
  const available = { ...lagging, observedGeneration: 1 };

  it("is so for the Deployment controller's first writes after apply created it: its revision, no pod counted", () => {
    const stored = storedWith(created);
    expect(readyOf(stored)).toBe("RolloutPending");
    expect(deploymentShown(stored, apply, progressing)).toBe(true);
  });

  it("is so under Ready for the same counts of an available rollout, and under a withdrawal for the same counts", () => {
    const ready = storedWith(deployment(available), 2);
    expect(readyOf(ready)).toBe("Ready");
    expect(deploymentShown(ready, apply, deployment({ ...available, unavailableReplicas: 0 }))).toBe(true);
    const withdraw = decide(d, undefined, DEFAULT_OPERATOR_DEFAULTS);
    const withdrawn = storedWith(deployment(lagging), 0, withdraw);
    expect(readyOf(withdrawn)).toBe("NotEligible");
    expect(deploymentShown(withdrawn, withdraw, deployment(available))).toBe(true);
    expect(deploymentShown(withdrawn, withdraw, deployment({ ...available, readyReplicas: 1 }))).toBe(false);
  });

  it("is so, whatever the rollout, while the Service is not published (Ready's reason comes before the rollout's)", () => {
    const foreign = {
      ...live.Service,
      metadata: { ...live.Service.metadata, ownerReferences: [{ uid: "someone-else", controller: true }] },
    };
    const unpublished = {
      ...d,
      status: planStatus({
        dpr: d,
        decision: apply,
        observed: { ...current, deployment: deployment(lagging), service: foreign },
        changed: [],
        now: NOW,
      }).status,
    };
    expect(readyOf(unpublished)).toBe("ServiceNotPublished");
    expect(deploymentShown(unpublished, apply, deployment(available))).toBe(true);
    expect(deploymentShown(unpublished, apply, deployment({ ...available, replicas: 3 }))).toBe(false);
  });

  it.each<{
    name: string;
    stored: () => ReturnType<typeof storedWith> | typeof d;
    decision?: Decision;
    deployment: () => Deployment;
  }>([
    {
      name: "another replica count",
      stored: () => storedWith(created),
      deployment: () => deployment({ observedGeneration: 1, replicas: 2 }),
    },
    {
      name: "another ready count",
      stored: () => storedWith(deployment(lagging)),
      deployment: () => deployment({ ...lagging, readyReplicas: 1 }),
    },
    {
      name: "a rollout now available, under RolloutPending",
      stored: () => storedWith(deployment(lagging), 2),
      deployment: () => deployment(available),
    },
    {
      name: "a rollout no longer available, under Ready",
      stored: () => storedWith(deployment(available), 2),
      deployment: () => deployment({ ...available, availableReplicas: 0 }),
    },
    {
      name: "a rollout no longer available, under ListenerUnavailable",
      stored: () => storedWith(deployment(available), 0),
      deployment: () => deployment({ ...available, availableReplicas: 0 }),
    },
    {
      name: "a hand edit of its spec (drift)",
      stored: () => storedWith(created),
      deployment: () => deployment({ observedGeneration: 1 }, (x) => ({ ...x, spec: { ...x.spec, replicas: 7 } })),
    },
    {
      name: "a Deployment someone else controls",
      stored: () => storedWith(created),
      deployment: () =>
        deployment({ observedGeneration: 1 }, (x) => ({
          ...x,
          metadata: { ...x.metadata, ownerReferences: [{ uid: "someone-else", controller: true }] },
        })),
    },
    {
      name: "a spec the core rejects",
      stored: () => storedWith(created),
      decision: { action: "reject", reason: "InvalidSpec", message: "m" },
      deployment: () => progressing,
    },
    { name: "no stored status", stored: () => d, deployment: () => progressing },
    {
      name: "a Ready reason this function does not know",
      stored: () => {
        const s = storedWith(created);
        return {
          ...s,
          status: {
            ...s.status,
            conditions: s.status.conditions?.map((c) => (c.type === "Ready" ? { ...c, reason: "Reconciling" } : c)),
          },
        };
      },
      deployment: () => progressing,
    },
  ])("is not so for $name", (row) => {
    expect(deploymentShown(storedWith(created), apply, progressing)).toBe(true);
    expect(deploymentShown(row.stored(), row.decision ?? apply, row.deployment())).toBe(false);
  });
});

describe("readsService, and the status with the Service as the stored status shows it", () => {
  type Deployment = LiveObject & ObservedDeployment;
  const counts = (readyReplicas: number, availableReplicas = readyReplicas, observedGeneration = 1) =>
    ({
      ...live.Deployment,
      status: { observedGeneration, replicas: 2, updatedReplicas: 2, readyReplicas, availableReplicas },
    }) as Deployment;
  const slices = (ready: number) => [
    { endpoints: Array.from({ length: ready }, () => ({ conditions: { ready: true } })) },
  ];
  const foreign = {
    ...live.Service,
    metadata: { ...live.Service.metadata, ownerReferences: [{ uid: "someone-else", controller: true }] },
  };
  type World = { deployment: Deployment; service: LiveObject | undefined; ready: number };
  const observedIn = (w: World) => ({
    ...current,
    deployment: w.deployment,
    service: w.service,
    endpointSlices: slices(w.ready),
  });
  /** `d` with the status computed from every child, as a run that read them all stores it. */
  const stored = (w: World) => ({
    ...d,
    status: planStatus({ dpr: d, decision: apply, observed: observedIn(w), changed: [], now: NOW }).status,
  });
  const reasonOf = (status: { conditions?: { type: string; reason: string }[] }, type = "Ready") =>
    status.conditions?.find((c) => c.type === type)?.reason;

  const worlds: Record<string, World> = {
    Ready: { deployment: counts(2), service: live.Service, ready: 2 },
    ListenerUnavailable: { deployment: counts(2), service: live.Service, ready: 0 },
    RolloutPending: { deployment: counts(0, 0, 0), service: live.Service, ready: 0 },
    ServiceNotPublished: { deployment: counts(2), service: foreign, ready: 2 },
  };

  it.each<{ changed: string[]; reads: boolean }>([
    { changed: ["Deployment"], reads: false },
    { changed: ["EndpointSlice"], reads: false },
    { changed: ["Deployment", "EndpointSlice"], reads: false },
    { changed: ["Service"], reads: true },
    { changed: ["EndpointSlice", "Service"], reads: true },
  ])("reads the Service for a change of $changed: $reads", ({ changed, reads }) => {
    const status = stored(worlds["Ready"]!).status;
    expect(reasonOf(status, "ServicePublished")).toBe("Published");
    expect(readsService(status, changed)).toBe(reads);
  });

  it("reads the Service the stored status does not show: no status, or no ServicePublished condition", () => {
    const status = stored(worlds["Ready"]!).status;
    expect(readsService(status, ["Deployment"])).toBe(false);
    expect(readsService(undefined, ["Deployment"])).toBe(true);
    expect(
      readsService({ ...status, conditions: status.conditions?.filter((c) => c.type !== "ServicePublished") }, [
        "Deployment",
      ]),
    ).toBe(true);
  });

  it.each<{ name: string; at: string; changed: Partial<World> }>([
    {
      name: "pods turning ready under RolloutPending",
      at: "RolloutPending",
      changed: { deployment: counts(2), ready: 2 },
    },
    { name: "a pod lost under Ready", at: "Ready", changed: { deployment: counts(1, 1), ready: 1 } },
    {
      name: "the rollout unavailable under ListenerUnavailable",
      at: "ListenerUnavailable",
      changed: { deployment: counts(2, 0) },
    },
    { name: "endpoints turning ready under ListenerUnavailable", at: "ListenerUnavailable", changed: { ready: 2 } },
    { name: "the endpoints gone under Ready", at: "Ready", changed: { ready: 0 } },
    {
      name: "another replica count under ServiceNotPublished",
      at: "ServiceNotPublished",
      changed: { deployment: counts(1, 1) },
    },
  ])("is the status every child makes, the Service unchanged: $name", ({ at, changed }) => {
    const before = stored(worlds[at]!);
    expect(reasonOf(before.status)).toBe(at);
    const after = observedIn({ ...worlds[at]!, ...changed });
    const full = planStatus({
      dpr: before,
      decision: apply,
      observed: after,
      changed: ["Deployment", "EndpointSlice"],
      now: NOW,
    });
    expect(full.write).toBe(true);
    const { service: _unread, ...read } = after;
    expect(
      planStatus({ dpr: before, decision: apply, observed: read, changed: ["Deployment", "EndpointSlice"], now: NOW }),
    ).toEqual(full);
  });

  it("takes the Service it did not read from the stored status, not from nothing: someone else's stays someone else's", () => {
    const before = stored(worlds["ServiceNotPublished"]!);
    expect(reasonOf(before.status, "ServicePublished")).toBe("ServiceNotOwned");
    const { service: _unread, ...read } = observedIn(worlds["ServiceNotPublished"]!);
    const unread = planStatus({ dpr: before, decision: apply, observed: read, changed: ["Deployment"], now: NOW });
    expect(unread).toMatchObject({ write: false, reflects: true, drift: false });
    expect(unread.status).toEqual(before.status);
    const absent = planStatus({
      dpr: before,
      decision: apply,
      observed: { ...read, service: undefined },
      changed: ["Deployment"],
      now: NOW,
    });
    expect(reasonOf(absent.status, "ServicePublished")).toBe("ServiceNotFound");
  });
});

describe("sourcesStatus: the status after apply wrote the sources document alone", () => {
  const settled = { ...d, status: plan().status };
  const rolled = decide(
    d,
    dgd({ componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } }),
    DEFAULT_OPERATOR_DEFAULTS,
  ) as Extract<Decision, { action: "apply" }>;

  // The ConfigMap as the write of the new document returned it: a new version.
  const written = {
    ...liveAfter(rolled).ConfigMap,
    metadata: { ...liveAfter(rolled).ConfigMap.metadata, resourceVersion: "900" },
  };

  it("is what the status function computes from every child once the ConfigMap carries the new sources", () => {
    expect(rolled.sources.revision).not.toBe(apply.sources.revision);
    const full = planStatus({
      dpr: settled,
      decision: rolled,
      observed: { ...current, configMap: written },
      changed: [],
      now: NOW,
    });
    expect(full.status).toMatchObject({ workerNamespaces: rolled.workerNamespaces, sourcesResourceVersion: "900" });
    expect(sourcesStatus(settled, rolled, written)).toEqual({ ...full, write: true });
  });

  it("writes nothing when the status already shows those sources, at that version of the ConfigMap", () => {
    expect(sourcesStatus(settled, apply, live.ConfigMap)).toMatchObject({ status: settled.status, write: false });
  });
});

describe("endpointsBehind: which Services' EndpointSlices are listed", () => {
  it("only a Service that was there when read: one created by this run, or absent, has none of its own", () => {
    expect(endpointsBehind(live.Service)).toBe(true);
    expect(endpointsBehind(undefined)).toBe(false);
  });
});

describe("remembersReads: the runs whose reads a child's later event may count as seen", () => {
  it.each([
    { reflects: true, drift: false, remembers: true },
    { reflects: false, drift: true, remembers: true },
    // Off the decision, and not answered for: the child's own event must run.
    { reflects: false, drift: false, remembers: false },
  ])("reflects $reflects, drift $drift: $remembers", ({ reflects, drift, remembers }) => {
    expect(remembersReads({ reflects, drift })).toBe(remembers);
  });
});
