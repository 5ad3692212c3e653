/**
 * What a status computation writes for one DynamoPoolRelay: the status the observed children make,
 * whether it differs from the stored one, and whether a changed child drifted from the decision.
 */
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { desiredChildren, foreignChildren, reflectsDecision, type LiveObject } from "./apply-plan.ts";
import { controlledBy } from "./ownership.ts";
import { stableJson } from "./connection-revision.ts";
import type { ReportedFailure } from "./classify.ts";
import { ConditionType, Reason } from "./conditions.ts";
import type { Decision } from "./decide.ts";
import {
  AS_STORED,
  computeStatus,
  eligibleSelection,
  selectionFields,
  type ObservedDeployment,
  type ObservedEndpointSlice,
} from "./status.ts";

export interface StatusPlanInput {
  dpr: {
    metadata: { name: string; namespace?: string; uid?: string; generation?: number };
    status?: DynamoPoolRelayStatus;
  };
  decision: Decision;
  /**
   * What was read: undefined for a child that does not exist. The ServiceAccount, Role,
   * RoleBinding and ConfigMap, which status shows nothing of but whether they carry the decision,
   * are absent (not read) when the stored status vouches for them, and so is the Service when it
   * is not what changed (shared/read-plan.ts).
   */
  observed: {
    serviceAccount?: LiveObject | undefined;
    role?: LiveObject | undefined;
    roleBinding?: LiveObject | undefined;
    configMap?: LiveObject | undefined;
    deployment: (LiveObject & ObservedDeployment) | undefined;
    service?: LiveObject | undefined;
    endpointSlices: readonly ObservedEndpointSlice[];
  };
  /** The kinds of the children whose change events this computation answers (none for a report from apply). */
  changed: readonly string[];
  /** An apply failure the apply function reported. */
  failure?: ReportedFailure;
  now: string;
}

export interface StatusPlan {
  status: DynamoPoolRelayStatus;
  /** The computed status differs from the stored one. */
  write: boolean;
  /** The children carry the decision for the current generation. */
  reflects: boolean;
  /** A changed child is off the decision: ask for a reconcile. */
  drift: boolean;
}

/**
 * The API server's refusal, shown while the children still do not carry this generation's
 * decision: from the report that brought it, or carried over from the stored Ready condition.
 */
function applyFailure(input: StatusPlanInput, reflects: boolean): string | undefined {
  const { dpr, decision } = input;
  if (reflects || decision.action !== "apply") return undefined;
  const generation = dpr.metadata.generation ?? 1;
  const reported = input.failure;
  if (reported && reported.uid === dpr.metadata.uid && reported.generation === generation) {
    return `the API server refused a child: ${reported.message}`;
  }
  const ready = dpr.status?.conditions?.find((c) => c.type === ConditionType.Ready);
  return ready?.reason === Reason.ApplyFailed && ready.observedGeneration === generation ? ready.message : undefined;
}

/** The observed children by kind, as apply reads them: the live object of each desired child. */
export function observedChildren(
  desired: readonly { kind: string }[],
  live: readonly (LiveObject | undefined)[],
  endpointSlices: readonly ObservedEndpointSlice[],
): StatusPlanInput["observed"] {
  const of = (kind: string) => live[desired.findIndex((d) => d.kind === kind)];
  return {
    serviceAccount: of("ServiceAccount"),
    role: of("Role"),
    roleBinding: of("RoleBinding"),
    configMap: of("ConfigMap"),
    deployment: of("Deployment"),
    service: of("Service"),
    endpointSlices,
  };
}

/**
 * Whether the Relay's EndpointSlices can show anything: only those of a Service that existed when
 * read. The EndpointSlice controller makes a Service's slices after the Service, so one just
 * created has none yet; a slice still labelled with the name of one that is absent (or that this
 * run deletes) is the garbage collector's to remove, and nothing listens behind it.
 */
export function endpointsBehind(service: LiveObject | undefined): boolean {
  return service !== undefined;
}

/**
 * The status once apply wrote the sources document alone (shared/vouched-status.ts, sourcesOnly): the
 * stored one, which vouched for every other child, with the worker namespaces, the sources
 * revision and the version of the ConfigMap as its write returned it.
 */
export function sourcesStatus(
  dpr: StatusPlanInput["dpr"],
  decision: Extract<Decision, { action: "apply" }>,
  configMap: LiveObject,
): StatusPlan {
  // A selector's rollout may also be a DGD coming into or out of its selection: its counts and
  // its Eligible message change with the sources (still eligible: the decision applies).
  const { selection } = decision;
  const { excludedDGDs: _, ...kept } = dpr.status ?? {};
  const status = {
    ...(selection ? kept : dpr.status),
    workerNamespaces: decision.workerNamespaces,
    sourcesRevision: decision.sources.revision,
    ...sourcesVersion(configMap, dpr.metadata.uid),
    ...(selection
      ? {
          ...selectionFields(selection),
          conditions: dpr.status?.conditions?.map((c) =>
            c.type === ConditionType.Eligible ? { ...c, message: eligibleSelection(selection) } : c,
          ),
        }
      : {}),
  };
  return { status, write: stableJson(status) !== stableJson(dpr.status ?? {}), reflects: true, drift: false };
}

/**
 * Whether a run may remember the children it read (shared/seen-versions.ts), so that their own
 * events at those versions cost nothing: only when they carry the decision, or when it asked for
 * the repair. A child off the decision that the run did not answer for (not among its changes)
 * must run on its own event, which asks for the repair.
 */
export function remembersReads(plan: Pick<StatusPlan, "reflects" | "drift">): boolean {
  return plan.reflects || plan.drift;
}

/** The version a ConfigMap that is this DynamoPoolRelay's was read at: what a rollout writes over (shared/vouched-status.ts). */
function sourcesVersion(
  configMap: LiveObject | undefined,
  dprUid: string | undefined,
): { sourcesResourceVersion?: string } {
  const version = configMap?.metadata["resourceVersion"];
  return configMap && controlledBy(configMap, dprUid) && typeof version === "string"
    ? { sourcesResourceVersion: version }
    : {};
}

export function planStatus(input: StatusPlanInput): StatusPlan {
  const { dpr, decision, observed } = input;
  const desired = decision.action === "apply" ? desiredChildren(decision) : [];
  // Only what was read is judged: a child not read is as the stored status, which vouched for it, says.
  const read: [string, string][] = [
    ["ServiceAccount", "serviceAccount"],
    ["Role", "role"],
    ["RoleBinding", "roleBinding"],
    ["ConfigMap", "configMap"],
    ["Deployment", "deployment"],
    ["Service", "service"],
  ];
  const live = new Map<string, LiveObject | undefined>(
    read
      .filter(([, field]) => field in observed)
      .map(([kind, field]) => [kind, observed[field as keyof typeof observed] as LiveObject | undefined]),
  );
  const reflects = reflectsDecision(decision, desired, live, dpr.metadata.uid);
  const previous = dpr.status?.observedGeneration;
  // Claimed only once the children carry this generation's decision, and never backwards.
  const observedGeneration = reflects ? Math.max(previous ?? 0, dpr.metadata.generation ?? 1) : previous;
  const failure = applyFailure(input, reflects);
  const status = computeStatus({
    dpr,
    decision,
    observed: {
      deployment: observed.deployment,
      service: "service" in observed ? observed.service : AS_STORED,
      endpointSlices: observed.endpointSlices,
    },
    previous: dpr.status,
    observedGeneration,
    now: input.now,
    reflects,
    foreign: foreignChildren(desired, live, dpr.metadata.uid),
    applyFailure: failure,
    // Not read: as the stored status, which vouched for it, has it.
    ...(live.has("ConfigMap")
      ? sourcesVersion(live.get("ConfigMap"), dpr.metadata.uid)
      : { sourcesResourceVersion: dpr.status?.sourcesResourceVersion }),
  });
  return {
    status,
    write: stableJson(status) !== stableJson(dpr.status ?? {}),
    reflects,
    // Only a changed child that is off the decision is drift: the others missing while apply is
    // still creating them, or a child of a kind that sends no events, is for apply's own run or
    // the resync to converge, not a second apply. A withdrawal undone by a late apply is drift
    // too; a refused apply would only fail again. A rejected spec leaves the children as they
    // are, so they always reflect it: never drift.
    drift:
      failure === undefined && !reflectsDecision(decision, desired, live, dpr.metadata.uid, new Set(input.changed)),
  };
}
