// Every read shortcut of the status and apply functions in one table: event x state -> reads.
import { describe, expect, it } from "vitest";
import { dgd, dpr } from "../test/builders.ts";
import { appliedHashes, liveChildren } from "../test/live-children.ts";
import { desiredChildren, type LiveObject } from "./apply-plan.ts";
import type { StatusInput } from "./classify.ts";
import { decide, type Decision } from "./decide.ts";
import { DEFAULT_OPERATOR_DEFAULTS } from "./eligibility.ts";
import type { ReconcileCause } from "./events.ts";
import { EVERY_CHILD, planReads, type Read, type ReadPlan, type ReadState, type StoredDpr } from "./read-plan.ts";
import { childVersion } from "./seen-versions.ts";
import { planStatus } from "./status-plan.ts";
import type { ObservedDeployment } from "./status.ts";

const NOW = "2026-02-01T00:00:00Z";
const UID = "11111111-2222-3333-4444-555555555555";
const settings = DEFAULT_OPERATOR_DEFAULTS;
const key = { namespace: "team-a", name: "g1" };
const source = dgd({ componentNames: { decode: ["g1-decode-aaaa1111"] } });
const rolledOn = dgd({ componentNames: { decode: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } });

const d = dpr({ generation: 3, uid: UID });
const applied = decide(d, source, settings) as Extract<Decision, { action: "apply" }>;
const live = liveChildren({
  dprUid: UID,
  clusterID: "dc-1",
  connectionRevision: applied.connectionRevision,
  sourcesText: applied.sources.text,
  appliedHash: appliedHashes(desiredChildren(applied)),
});
const deployment = live.Deployment as LiveObject & ObservedDeployment;
/** The DynamoPoolRelay as a status run leaves it once the children carry the decision: its status vouches for them. */
const vouching: StoredDpr = {
  ...d,
  status: planStatus({
    dpr: d,
    decision: applied,
    changed: [],
    now: NOW,
    observed: {
      serviceAccount: live.ServiceAccount,
      role: live.Role,
      roleBinding: live.RoleBinding,
      configMap: live.ConfigMap,
      deployment,
      service: live.Service,
      endpointSlices: [],
    },
  }).status,
};
const withReady = (reason: string): StoredDpr => ({
  ...vouching,
  status: {
    ...vouching.status,
    conditions: vouching.status!.conditions!.map((c) => (c.type === "Ready" ? { ...c, reason } : c)),
  },
});
const withoutService: StoredDpr = {
  ...vouching,
  status: { ...vouching.status, conditions: vouching.status!.conditions!.filter((c) => c.type !== "ServicePublished") },
};
const fresh: StoredDpr = d;

const child = (kind: string, extra: Partial<StatusInput> = {}): StatusInput => ({
  key,
  changed: [kind],
  version: childVersion(
    kind,
    "g1-pool-relay",
    live[kind as keyof typeof live] ?? { metadata: { name: "g1-pool-relay" } },
  ),
  ...extra,
});
const report = (extra: Partial<StatusInput> = {}): StatusInput => ({ key, changed: [], report: true, ...extra });
const moved = { ...deployment, status: { replicas: 2, readyReplicas: 1 } };

const status = (
  input: StatusInput,
  more: { seen?: "same" | "older" | "equal"; unwritten?: boolean } = {},
): ReadState => ({ fn: "status", input, ...more });
const run = (input: StatusInput, stored: StoredDpr, offRecord = false): ReadState => ({
  fn: "status",
  input,
  dpr: stored,
  settings,
  offRecord,
});
const request = (causes: ReconcileCause[], stored?: StoredDpr | "gone"): ReadState => ({
  fn: "apply",
  causes,
  ...(stored ? { dpr: stored } : {}),
});
const children = (
  causes: ReconcileCause[],
  stored: StoredDpr,
  decision: Decision,
  more: { unreadRefused?: boolean; serviceKept?: boolean } = {},
): ReadState => ({ fn: "apply", causes, dpr: stored, decision, ...more });

const ALL: readonly Read[] = ["DynamoGraphDeployment", ...EVERY_CHILD];
const withdrawal = decide(d, undefined, settings);
const rejection: Decision = { action: "reject", reason: "InvalidSpec", message: "spec.clusterID: required" };
const rollout = decide(vouching, rolledOn, settings);

type Expected = Pick<ReadPlan, "reads" | "answer"> & { recorded?: boolean; unread?: "sources" | "createAbsent" };

// function | event | state -> reads (and the answer, when the run ends there)
const TABLE: [string, ReadState, Expected][] = [
  // status, before any read: the event and what this process last read of the key
  [
    "status | apply's report, status written by apply | any",
    status(report({ shownByApply: true })),
    { reads: [], answer: "ShownByApply" },
  ],
  [
    "status | EndpointSlice added, no ready endpoint | any",
    status(child("EndpointSlice", { addsNoEndpoint: true })),
    { reads: [], answer: "NoEndpointAdded" },
  ],
  [
    "status | child last written by apply | any",
    status(child("ConfigMap", { awaitsReport: true })),
    { reads: [], answer: "AwaitsReport" },
  ],
  [
    "status | child update | read here at this very version",
    status(child("Deployment"), { seen: "same" }),
    { reads: [], answer: "Seen" },
  ],
  [
    "status | child update | older than read here",
    status(child("Deployment"), { seen: "older" }),
    { reads: [], answer: "Stale" },
  ],
  [
    "status | child update | equal to what was read here, another version",
    status(child("Deployment"), { seen: "equal" }),
    { reads: ["DynamoPoolRelay"], answer: "SeenIfUnwritten" },
  ],
  [
    "status | child update | equal, status still the one left here",
    status(child("Deployment"), { seen: "equal", unwritten: true }),
    { reads: [], answer: "Seen" },
  ],
  [
    "status | child update | equal, status written since",
    status(child("Deployment"), { seen: "equal", unwritten: false }),
    { reads: ["DynamoPoolRelay"] },
  ],
  ["status | child update | never read here", status(child("Deployment")), { reads: ["DynamoPoolRelay"] }],
  ["status | child delete | any", status({ key, changed: ["Service"] }), { reads: ["DynamoPoolRelay"] }],
  ["status | apply's report | any", status(report()), { reads: ["DynamoPoolRelay"] }],
  // status, the run once the DynamoPoolRelay is read
  [
    "status | Deployment update it shows already | status vouches",
    run(child("Deployment", { deployment }), vouching),
    { reads: [], answer: "Unchanged", recorded: true },
  ],
  [
    "status | Deployment update with new counts | status vouches",
    run(child("Deployment", { deployment: moved }), vouching),
    { reads: ["Deployment", "EndpointSlice"], recorded: true },
  ],
  [
    "status | EndpointSlice update | status vouches",
    run(child("EndpointSlice"), vouching),
    { reads: ["Deployment", "EndpointSlice"], recorded: true },
  ],
  [
    "status | Service update | status vouches",
    run(child("Service"), vouching),
    { reads: ["Deployment", "Service", "EndpointSlice"], recorded: true },
  ],
  [
    "status | Deployment update | status vouches, shows no Service",
    run(child("Deployment"), withoutService),
    { reads: ["Deployment", "Service", "EndpointSlice"], recorded: true },
  ],
  [
    "status | Deployment update | status does not vouch (Reconciling)",
    run(child("Deployment", { deployment }), withReady("Reconciling")),
    { reads: ALL },
  ],
  [
    "status | Deployment update | children off the recorded decision",
    run(child("Deployment"), vouching, true),
    { reads: ALL },
  ],
  ["status | ConfigMap update | status vouches", run(child("ConfigMap"), vouching), { reads: ALL }],
  [
    "status | apply's report with a Deployment update | status vouches",
    run({ ...child("Deployment"), report: true }, vouching),
    { reads: ALL },
  ],
  ["status | apply's report | no status", run(report(), fresh), { reads: ALL }],
  [
    "status | the Deployment changed | no status: apply's first run under way",
    run(child("Deployment"), fresh),
    { reads: [], answer: "AwaitsApply" },
  ],
  [
    "status | an EndpointSlice changed | no status: apply's first run under way",
    run(child("EndpointSlice"), fresh),
    { reads: [], answer: "AwaitsApply" },
  ],
  // apply, the request
  ["apply | DynamoPoolRelay changed | nothing read", request(["DPRChanged"]), { reads: ["DynamoPoolRelay"] }],
  [
    "apply | DynamoPoolRelay changed | its generation observed",
    request(["DPRChanged"], vouching),
    { reads: [], answer: "Observed" },
  ],
  [
    "apply | DynamoPoolRelay changed | a spec rejected at its generation",
    request(["DPRChanged"], withReady("InvalidSpec")),
    { reads: ["DynamoGraphDeployment"] },
  ],
  [
    "apply | DynamoPoolRelay changed | a new generation",
    request(["DPRChanged"], fresh),
    { reads: ["DynamoGraphDeployment"] },
  ],
  [
    "apply | DGD changed, drift, resync | nothing read",
    request(["DGDChanged", "DPRChanged"]),
    { reads: ["DynamoPoolRelay", "DynamoGraphDeployment"] },
  ],
  ["apply | DGD changed | both read", request(["DGDChanged"], vouching), { reads: [] }],
  ["apply | any | DynamoPoolRelay gone", request(["Resync"], "gone"), { reads: [], answer: "Gone" }],
  // apply, the children for the decision
  ["apply | any | spec rejected", children(["DPRChanged"], vouching, rejection), { reads: [] }],
  [
    "apply | DGD changed | withdrawal",
    children(["DGDChanged"], vouching, withdrawal),
    { reads: ["Service", "Deployment"] },
  ],
  [
    "apply | DGD changed | withdrawal, Service someone else's stays",
    children(["DGDChanged"], vouching, withdrawal, { serviceKept: true }),
    { reads: ["EndpointSlice"] },
  ],
  [
    "apply | DGD changed | withdrawal, Service absent or deleted",
    children(["DGDChanged"], vouching, withdrawal, { serviceKept: false }),
    { reads: [] },
  ],
  [
    "apply | DGD changed | rollout, status vouches",
    children(["DGDChanged"], vouching, rollout),
    { reads: [], unread: "sources" },
  ],
  [
    "apply | DGD changed | rollout, the ConfigMap changed since (409)",
    children(["DGDChanged"], vouching, rollout, { unreadRefused: true }),
    { reads: EVERY_CHILD },
  ],
  [
    "apply | DGD changed and drift | rollout, status vouches",
    children(["DGDChanged", "Drift"], vouching, rollout),
    { reads: EVERY_CHILD },
  ],
  [
    "apply | DGD changed | status does not vouch (ApplyFailed)",
    children(["DGDChanged"], withReady("ApplyFailed"), rollout),
    { reads: EVERY_CHILD },
  ],
  ["apply | resync | status vouches", children(["Resync"], vouching, applied), { reads: EVERY_CHILD }],
  [
    "apply | any | children no status showed",
    children(["DPRChanged"], fresh, applied),
    { reads: [], unread: "createAbsent" },
  ],
  [
    "apply | any | a child to create exists (409)",
    children(["DPRChanged"], fresh, applied, { unreadRefused: true }),
    { reads: EVERY_CHILD },
  ],
];

describe("planReads: which objects a run reads", () => {
  it.each(TABLE)("%s", (_row, state, expected) => {
    const plan = planReads(state);
    const unread = plan.unread === undefined ? undefined : plan.unread === "createAbsent" ? "createAbsent" : "sources";
    expect({
      reads: plan.reads,
      ...(plan.answer ? { answer: plan.answer } : {}),
      ...(plan.recorded ? { recorded: true } : {}),
      ...(unread ? { unread } : {}),
    }).toStrictEqual(expected);
  });

  it("takes a rollout's ConfigMap version from the stored status, and the recorded decision is the DGD's", () => {
    const plan = planReads(children(["DGDChanged"], vouching, rollout));
    expect(plan.unread).toStrictEqual({
      sources: {
        sourcesRevision: vouching.status!.sourcesRevision,
        resourceVersion: vouching.status!.sourcesResourceVersion,
      },
    });
    expect(planReads(run(child("EndpointSlice"), vouching)).recorded).toMatchObject({
      action: "apply",
      workerNamespaces: applied.workerNamespaces,
      connectionRevision: applied.connectionRevision,
      sources: { revision: applied.sources.revision },
    });
  });
});
