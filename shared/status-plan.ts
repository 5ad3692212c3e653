/**
 * What the status function writes and replies for one DynamoPoolRelay: the status computed from
 * the observed world, whether it differs from the stored one, the generation it may claim, and
 * whether the children drifted from the decision (then a reconcile is requested).
 */
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { desiredChildren, foreignChildren, reflectsDecision, type LiveObject } from "./apply-plan.ts";
import { controlledBy } from "./ownership.ts";
import { stableJson } from "./connection-revision.ts";
import type { ReportedFailure } from "./classify.ts";
import { ConditionType, Reason, readyReason } from "./conditions.ts";
import type { Decision, DecisionSettings } from "./decide.ts";
import { recordedDecision } from "./vouched-status.ts";
import { AS_STORED, computeStatus, rolledOut, type ObservedDeployment, type ObservedEndpointSlice } from "./status.ts";

export interface StatusPlanInput {
  dpr: { metadata: { name: string; namespace?: string; uid?: string; generation?: number }; status?: DynamoPoolRelayStatus };
  decision: Decision;
  /**
   * What was read: undefined for a child that does not exist. The ServiceAccount, Role,
   * RoleBinding and ConfigMap, which status shows nothing of but whether they carry the decision,
   * are absent (not read) when the stored status vouches for them (`shownOnly`), and so is the
   * Service when it is not what changed (`readsService`).
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
  /** The children do not carry the decision for the current generation. */
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
    deployment: of("Deployment") as (LiveObject & ObservedDeployment) | undefined,
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

const SHOWN_KINDS: readonly string[] = ["Deployment", "Service", "EndpointSlice"];

/**
 * The decision a status run takes from the stored status, reading neither the DGD nor the children
 * status shows nothing of: with no report from apply among the events the run answers (a report
 * comes when apply did not show what its writes make: shared/classify.ts, StatusInput.report),
 * on a change of only the children status shows (the Deployment's counts
 * as pods start, the EndpointSlices, the Service) under a stored status that vouches for the
 * decision and the other children (shared/vouched-status.ts, recordedDecision). The Deployment, and the
 * Service on its own change (readsService), are still judged against that decision (a hand edit is
 * drift), and rendered from the DynamoPoolRelay and its connection revision alone, as they always are. Undefined: read the DGD
 * and every child. Their own events (the ConfigMap's) read them all; kinds that send none
 * (ServiceAccount, Role, RoleBinding) are put back by the next reconcile. A DGD changed meanwhile
 * is apply's to act on: its event asks for that reconcile, which shows the status it makes.
 * Sound because the DynamoPoolRelay is read first: a status written after that read, from newer
 * children, makes this run's write fail (409), and its retry reads again.
 */
export function shownOnly(
  dpr: unknown,
  settings: DecisionSettings,
  input: { changed: readonly string[]; report?: true },
): Decision | undefined {
  const shown = input.changed.length > 0 && input.changed.every((k) => SHOWN_KINDS.includes(k));
  return shown && !input.report ? recordedDecision(dpr, settings) : undefined;
}

/**
 * Whether a run under a recorded decision (shownOnly) reads the Service: for its own change, or
 * when the stored status does not show it. Otherwise the Service is as that status shows it (its
 * ServicePublished verdict: shared/status.ts, AS_STORED): a status written after this run read
 * the DynamoPoolRelay fails its write (409), and the Service's own change brings a run that reads
 * it (a lost one, the resync's apply run, which reads every child). The Deployment and the EndpointSlices are read
 * together whichever changed: both follow the Relay pods' readiness, so one's change comes with
 * the other's, and a run that reads both shows them in one write (the other's event then finds
 * its version read: shared/seen-versions.ts).
 */
export function readsService(status: DynamoPoolRelayStatus | undefined, changed: readonly string[]): boolean {
  return changed.includes("Service") || !status?.conditions?.some((c) => c.type === ConditionType.ServicePublished);
}

/**
 * Whether a change of the Relay Deployment alone, as its event carries it, changes nothing the
 * stored status shows, under the decision that status vouches for (shownOnly): the status's
 * replica counts, whether a replica of the current template is available (as its Ready reason
 * tells), and the Deployment carrying that decision under this DynamoPoolRelay's control (a hand
 * edit is drift). What the Deployment controller writes as pods are created and scheduled
 * (its revision annotation, its conditions, unavailable counts) then costs no read but the
 * DynamoPoolRelay's. A hint that may only skip work: the event's Deployment feeds no write, and one
 * that shows anything else is read.
 */
export function deploymentShown(dpr: StatusPlanInput["dpr"], decision: Decision, deployment: LiveObject & ObservedDeployment): boolean {
  const status = dpr.status;
  if (!status || decision.action === "reject" || !controlledBy(deployment, dpr.metadata.uid)) return false;
  const counts = deployment.status ?? {};
  if ((counts.replicas ?? 0) !== status.replicas || (counts.readyReplicas ?? 0) !== status.readyReplicas) return false;
  if (decision.action === "apply" && !reflectsDecision(decision, desiredChildren(decision), new Map([["Deployment", deployment]]), dpr.metadata.uid)) return false;
  // What the status's Ready reason shows of the rollout (shared/conditions.ts, READY_REASONS).
  const shown = readyReason(status.conditions?.find((c) => c.type === ConditionType.Ready)?.reason)?.rolledOut;
  return shown === "either" || shown === rolledOut(deployment);
}

/**
 * The status once apply wrote the sources document alone (shared/vouched-status.ts, sourcesOnly): the
 * stored one, which vouched for every other child, with the worker namespaces, the sources
 * revision and the version of the ConfigMap as its write returned it.
 */
export function sourcesStatus(dpr: StatusPlanInput["dpr"], decision: Extract<Decision, { action: "apply" }>, configMap: LiveObject): StatusPlan {
  const status = { ...dpr.status, workerNamespaces: decision.workerNamespaces, sourcesRevision: decision.sources.revision, ...sourcesVersion(configMap, dpr.metadata.uid) };
  return { status, write: stableJson(status) !== stableJson(dpr.status ?? {}), reflects: true, drift: false };
}

/** The version a ConfigMap that is this DynamoPoolRelay's was read at: what a rollout writes over (shared/vouched-status.ts). */
function sourcesVersion(configMap: LiveObject | undefined, dprUid: string | undefined): { sourcesResourceVersion?: string } {
  const version = configMap?.metadata["resourceVersion"];
  return configMap && controlledBy(configMap, dprUid) && typeof version === "string" ? { sourcesResourceVersion: version } : {};
}

export function planStatus(input: StatusPlanInput): StatusPlan {
  const { dpr, decision, observed } = input;
  const desired = decision.action === "apply" ? desiredChildren(decision) : [];
  // Only what was read is judged: a child not read is as the stored status, which vouched for it, says.
  const read: [string, string][] = [["ServiceAccount", "serviceAccount"], ["Role", "role"], ["RoleBinding", "roleBinding"], ["ConfigMap", "configMap"], ["Deployment", "deployment"], ["Service", "service"]];
  const live = new Map<string, LiveObject | undefined>(read.filter(([, field]) => field in observed).map(([kind, field]) => [kind, observed[field as keyof typeof observed] as LiveObject | undefined]));
  const reflects = reflectsDecision(decision, desired, live, dpr.metadata.uid);
  const previous = dpr.status?.observedGeneration;
  // Claimed only once the children carry this generation's decision, and never backwards.
  const observedGeneration = reflects ? Math.max(previous ?? 0, dpr.metadata.generation ?? 1) : previous;
  const failure = applyFailure(input, reflects);
  const status = computeStatus({
    dpr,
    decision,
    observed: { deployment: observed.deployment, service: "service" in observed ? observed.service : AS_STORED, endpointSlices: observed.endpointSlices },
    previous: dpr.status,
    observedGeneration,
    now: input.now,
    reflects,
    foreign: foreignChildren(desired, live, dpr.metadata.uid),
    applyFailure: failure,
    // Not read: as the stored status, which vouched for it, has it.
    ...(live.has("ConfigMap") ? sourcesVersion(live.get("ConfigMap"), dpr.metadata.uid) : { sourcesResourceVersion: dpr.status?.sourcesResourceVersion }),
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
    drift: failure === undefined && !reflectsDecision(decision, desired, live, dpr.metadata.uid, new Set(input.changed)),
  };
}
