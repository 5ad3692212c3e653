/**
 * Which objects a run of the status function or of the apply function reads: every shortcut that
 * skips a read is decided here, from the event, what this process last read of the key, and the
 * stored status once the DynamoPoolRelay is read. Each shortcut only ever skips work.
 */
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { childrenNeverShown, desiredChildren, reflectsDecision, type LiveObject } from "./apply-plan.ts";
import type { StatusInput } from "./classify.ts";
import { ConditionType, readyReason } from "./conditions.ts";
import type { Decision, DecisionSettings } from "./decide.ts";
import type { ReconcileCause } from "./events.ts";
import { controlledBy } from "./ownership.ts";
import { changeObserved, neverWritten, type ResyncCandidate } from "./resync.ts";
import type { Seen } from "./seen-versions.ts";
import type { StatusPlanInput } from "./status-plan.ts";
import { rolledOut, type ObservedDeployment } from "./status.ts";
import { recordedDecision, sourcesOnly, type ObservedDpr, type VouchedSources } from "./vouched-status.ts";

/** What a run may read: the DynamoPoolRelay, its DGD, and the children (the EndpointSlices listed). */
export type Read =
  | "DynamoPoolRelay"
  | "DynamoGraphDeployment"
  | "ServiceAccount"
  | "Role"
  | "RoleBinding"
  | "ConfigMap"
  | "Deployment"
  | "Service"
  | "EndpointSlice";

/** The children status shows nothing of but whether they carry the decision. */
export const UNSHOWN: readonly Read[] = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap"];
/** Every child, in apply's order, and the EndpointSlices behind the Service. */
export const EVERY_CHILD: readonly Read[] = [...UNSHOWN, "Deployment", "Service", "EndpointSlice"];

/** The DynamoPoolRelay as a planner reads it: its identity and its stored status. */
export type StoredDpr = StatusPlanInput["dpr"] & ObservedDpr & ResyncCandidate;

/**
 * What is known when a plan is asked for. Status: first the event and this process's record of the
 * key (`seen`, then `unwritten` once one read of the DynamoPoolRelay tells it), then, in the run,
 * the DynamoPoolRelay read (`offRecord` when the children were found off the recorded decision).
 * Apply: the request's causes, then the DynamoPoolRelay (with its DGD), then the decision, then
 * what became of an unread write (`unreadRefused`) or of the Service a withdrawal found.
 */
export type ReadState =
  | { fn: "status"; input: StatusInput; seen?: Seen | undefined; unwritten?: boolean }
  | { fn: "status"; input: StatusInput; dpr: StoredDpr; settings: DecisionSettings; offRecord?: boolean }
  | { fn: "apply"; causes: readonly ReconcileCause[]; dpr?: StoredDpr | "gone" }
  | {
      fn: "apply";
      causes: readonly ReconcileCause[];
      dpr: StoredDpr;
      decision: Decision;
      unreadRefused?: boolean;
      serviceKept?: boolean;
    };

export interface ReadPlan {
  /** The reads to do next, together. */
  reads: readonly Read[];
  /** Answered after those reads: nothing more is read or written. */
  answer?:
    | "ShownByApply"
    | "NoEndpointAdded"
    | "AwaitsReport"
    | "AwaitsApply"
    | "Seen"
    | "Stale"
    | "SeenIfUnwritten"
    | "Unchanged"
    | "Gone"
    | "Observed";
  /** Status: the decision the stored status records, taken instead of the DGD's. */
  recorded?: Extract<Decision, { action: "apply" | "withdraw" }>;
  /** Apply: a write that needs no read, the status vouching for what it would read. */
  unread?: { sources: VouchedSources } | "createAbsent";
}

export function planReads(state: ReadState): ReadPlan {
  return state.fn === "status"
    ? "dpr" in state
      ? statusRun(state)
      : statusEvent(state)
    : "decision" in state
      ? applyChildren(state)
      : applyPair(state);
}

/** A status event before any read: what it brings that this process has not read yet. */
function statusEvent({
  input,
  seen,
  unwritten,
}: {
  input: StatusInput;
  seen?: Seen | undefined;
  unwritten?: boolean;
}): ReadPlan {
  // Apply wrote the status its writes make: nothing is left to show.
  if (input.shownByApply) return { reads: [], answer: "ShownByApply" };
  // A new slice with no ready endpoint leaves the count of ready endpoints as it was.
  if (input.addsNoEndpoint) return { reads: [], answer: "NoEndpointAdded" };
  // Apply's own write: apply shows it, or its report brings a run that reads it (shared/last-write.ts).
  if (input.awaitsReport) return { reads: [], answer: "AwaitsReport" };
  if (seen === "same") return { reads: [], answer: "Seen" };
  if (seen === "older") return { reads: [], answer: "Stale" };
  // Equal at another version: the same only while the status is still the one the last run here
  // left, which one read of the DynamoPoolRelay tells (shared/seen-versions.ts).
  if (seen === "equal" && unwritten === undefined) return { reads: ["DynamoPoolRelay"], answer: "SeenIfUnwritten" };
  if (seen === "equal" && unwritten) return { reads: [], answer: "Seen" };
  return { reads: ["DynamoPoolRelay"] };
}

/** A status run once the DynamoPoolRelay is read: the DGD and every child, or only what changed. */
function statusRun({
  input,
  dpr,
  settings,
  offRecord,
}: {
  input: StatusInput;
  dpr: StoredDpr;
  settings: DecisionSettings;
  offRecord?: boolean;
}): ReadPlan {
  // No status yet: apply's first run is under way (its children's events come while it still
  // writes, for seconds in a burst) and shows the status its writes make, which a status written
  // now would only make lose (409, then a report and a run that reads everything). A pair whose
  // first apply never writes is unobserved, so the source's requeue asks for it again.
  if (!input.report && neverWritten(dpr)) return { reads: [], answer: "AwaitsApply" };
  const recorded = offRecord ? undefined : shownOnly(dpr, settings, input);
  if (!recorded) return { reads: ["DynamoGraphDeployment", ...EVERY_CHILD] };
  // The Deployment alone changed, and its event shows nothing the status does not.
  if (input.deployment && deploymentShown(dpr, recorded, input.deployment))
    return { reads: [], answer: "Unchanged", recorded };
  const service: Read[] = readsService(dpr.status, input.changed) ? ["Service"] : [];
  return { reads: ["Deployment", ...service, "EndpointSlice"], recorded };
}

/** An apply run's first reads: the DynamoPoolRelay, and its DGD unless the request needs none. */
function applyPair({ causes, dpr }: { causes: readonly ReconcileCause[]; dpr?: StoredDpr | "gone" }): ReadPlan {
  // Asked only because the DynamoPoolRelay changed (its change event, taken unread): it alone first, and
  // nothing more when that change is observed by now (the request came late or twice).
  const dprOnly = causes.every((cause) => cause === "DPRChanged");
  if (dpr === undefined) return { reads: dprOnly ? ["DynamoPoolRelay"] : ["DynamoPoolRelay", "DynamoGraphDeployment"] };
  if (dpr === "gone") return { reads: [], answer: "Gone" };
  if (!dprOnly) return { reads: [] };
  return changeObserved(dpr) ? { reads: [], answer: "Observed" } : { reads: ["DynamoGraphDeployment"] };
}

/** The children an apply run reads for its decision. */
function applyChildren(state: {
  causes: readonly ReconcileCause[];
  dpr: StoredDpr;
  decision: Decision;
  unreadRefused?: boolean;
  serviceKept?: boolean;
}): ReadPlan {
  const { causes, dpr, decision } = state;
  // A rejected spec leaves the children as they are.
  if (decision.action === "reject") return { reads: [] };
  // A withdrawal shows the Relay pods that still run, and their endpoints behind a Service that
  // stays (someone else's): none behind one absent or deleted.
  if (decision.action === "withdraw")
    return {
      reads: state.serviceKept === undefined ? ["Service", "Deployment"] : state.serviceKept ? ["EndpointSlice"] : [],
    };
  // The status's word was out of date (the ConfigMap changed since, or a child to create exists).
  if (state.unreadRefused) return { reads: EVERY_CHILD };
  // A rollout the stored status vouches for writes the sources document alone.
  const sources = sourcesOnly(dpr, decision, causes);
  if (sources) return { reads: [], unread: { sources } };
  // Children no status ever showed are most likely all absent: each is created only if absent.
  if (childrenNeverShown(dpr)) return { reads: [], unread: "createAbsent" };
  return { reads: EVERY_CHILD };
}

const SHOWN_KINDS: readonly string[] = ["Deployment", "Service", "EndpointSlice"];

/**
 * The decision a status run takes from the stored status, reading neither the DGD nor the children
 * status shows nothing of: on a change of only the children status shows (the Deployment's counts
 * as pods start, the EndpointSlices, the Service), with no report from apply among the events the
 * run answers, under a stored status that vouches for the decision and the other children
 * (shared/vouched-status.ts, recordedDecision). Sound because the DynamoPoolRelay is read first: a
 * status written after that read, from newer children, makes this run's write fail (409). A DGD
 * changed meanwhile is apply's to act on. Undefined: read the DGD and every child.
 */
export function shownOnly(
  dpr: unknown,
  settings: DecisionSettings,
  input: { changed: readonly string[]; report?: true },
): Extract<Decision, { action: "apply" | "withdraw" }> | undefined {
  const shown = input.changed.length > 0 && input.changed.every((k) => SHOWN_KINDS.includes(k));
  return shown && !input.report ? recordedDecision(dpr, settings) : undefined;
}

/**
 * Whether a run under a recorded decision (shownOnly) reads the Service: for its own change, or
 * when the stored status does not show it. Otherwise the Service is as that status shows it
 * (shared/status.ts, AS_STORED). The Deployment and the EndpointSlices are read together whichever
 * changed: both follow the Relay pods' readiness, so one run shows both in one write.
 */
export function readsService(status: DynamoPoolRelayStatus | undefined, changed: readonly string[]): boolean {
  return changed.includes("Service") || !status?.conditions?.some((c) => c.type === ConditionType.ServicePublished);
}

/**
 * Whether a change of the Relay Deployment alone, as its event carries it, changes nothing the
 * stored status shows under the decision it records (shownOnly): the replica counts, whether a
 * replica of the current template is available (as its Ready reason tells), and the Deployment
 * carrying that decision under this DynamoPoolRelay's control (a hand edit is drift). The
 * Deployment controller's writes as pods are created then cost only the DynamoPoolRelay's read.
 */
export function deploymentShown(
  dpr: StatusPlanInput["dpr"],
  decision: Decision,
  deployment: LiveObject & ObservedDeployment,
): boolean {
  const status = dpr.status;
  if (!status || decision.action === "reject" || !controlledBy(deployment, dpr.metadata.uid)) return false;
  const counts = deployment.status ?? {};
  if ((counts.replicas ?? 0) !== status.replicas || (counts.readyReplicas ?? 0) !== status.readyReplicas) return false;
  if (
    decision.action === "apply" &&
    !reflectsDecision(decision, desiredChildren(decision), new Map([["Deployment", deployment]]), dpr.metadata.uid)
  )
    return false;
  // What the status's Ready reason shows of the rollout (shared/conditions.ts, READY_REASONS).
  const shown = readyReason(status.conditions?.find((c) => c.type === ConditionType.Ready)?.reason)?.rolledOut;
  return shown === "either" || shown === rolledOut(deployment);
}
