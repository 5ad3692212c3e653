/**
 * The status of a DynamoPoolRelay, rebuilt from the decision and the observed children on every
 * run (from its own previous status only to keep condition transition times, and for a Service
 * the run did not read: AS_STORED).
 */
import type { Condition } from "./api/kubernetes.ts";
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { CONDITION_ORDER, ConditionType, Reason } from "./conditions.ts";
import type { Decision, Selection } from "./decide.ts";
import { selectorLabels, serviceEndpoint } from "./names.ts";
import { ownership, type Ownership, type Owned } from "./ownership.ts";
import { MAX_EXCLUDED_SHOWN } from "./selection.ts";

export interface ObservedDeployment {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

export type ObservedService = Owned;

export interface ObservedEndpointSlice {
  endpoints?: { conditions?: { ready?: boolean | null } }[] | null;
}

/**
 * A Service a status run did not read, under the decision the stored status records: it is as that
 * status shows it (shared/read-plan.ts, readsService).
 */
export const AS_STORED = "asStored";

export interface Observed {
  deployment?: ObservedDeployment | undefined;
  service?: ObservedService | typeof AS_STORED | undefined;
  endpointSlices: readonly ObservedEndpointSlice[];
}

/** Endpoints a Relay is listening on: EndpointSlice readiness is nil-means-ready. */
export function readyEndpoints(slices: readonly ObservedEndpointSlice[]): number {
  return slices.reduce((n, s) => n + (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length, 0);
}

export interface StatusInput {
  dpr: { metadata: { name: string; namespace?: string; uid?: string; generation?: number } };
  decision: Decision;
  observed: Observed;
  /** Status as last written; only its conditions' transition times are kept. */
  previous: DynamoPoolRelayStatus | undefined;
  /** The generation this status is for; the caller advances it only after a successful apply or withdrawal. */
  observedGeneration: number | undefined;
  /** RFC 3339 time for transitions. */
  now: string;
  /** Why the API server refused this generation's children, as a sentence; undefined when it did not. */
  applyFailure?: string | undefined;
  /** Children (other than the Service) someone else controls, e.g. `ServiceAccount g1-pool-relay`: nothing that needs them is applied. */
  foreign: readonly string[];
  /**
   * The children carry the decision (intent hashes match). Until they do, the status keeps the
   * worker namespaces and revisions in effect and Ready is False: it describes what the Relay runs.
   */
  reflects: boolean;
  /**
   * The resourceVersion of the sources ConfigMap the revisions are found at: as read, or as the
   * stored status had it when the ConfigMap was not read; undefined when it is missing or not ours.
   */
  sourcesResourceVersion?: string | undefined;
}

type Verdict = { status: boolean; reason: string; message: string };

/** A condition of the stored status as the verdict it was written from. */
function recorded(previous: DynamoPoolRelayStatus | undefined, type: ConditionType): Verdict | undefined {
  const c = previous?.conditions?.find((p) => p.type === type);
  return c && { status: c.status === "True", reason: c.reason, message: c.message };
}

function condition(type: ConditionType, v: Verdict, input: StatusInput): Condition {
  const status = v.status ? "True" : "False";
  const previous = input.previous?.conditions?.find((c) => c.type === type);
  return {
    type,
    status,
    ...(input.dpr.metadata.generation === undefined ? {} : { observedGeneration: input.dpr.metadata.generation }),
    lastTransitionTime: previous && previous.status === status ? previous.lastTransitionTime : input.now,
    reason: v.reason,
    message: v.message,
  };
}

function published(ownership: Ownership, decision: Decision, name: string): Verdict {
  const svc = `Service ${name}`;
  if (ownership === "foreign") {
    return {
      status: false,
      reason: Reason.ServiceNotOwned,
      message: `${svc} exists but is not controlled by this DynamoPoolRelay; it is left untouched`,
    };
  }
  if (decision.action === "withdraw") {
    // Until the withdrawal has deleted it, the Service still routes to the Relay.
    if (ownership === "ours")
      return {
        status: true,
        reason: Reason.Withdrawing,
        message: `${svc} is still published; it is being withdrawn: ${decision.message}`,
      };
    return { status: false, reason: Reason.Withdrawn, message: `${svc} is withdrawn: ${decision.message}` };
  }
  if (ownership === "absent")
    return { status: false, reason: Reason.ServiceNotFound, message: `${svc} does not exist yet` };
  return { status: true, reason: Reason.Published, message: `${svc} is published` };
}

function listener(ready: number): Verdict {
  return ready > 0
    ? {
        status: true,
        reason: Reason.EndpointsReady,
        message: `${ready} ready Relay endpoint${ready === 1 ? "" : "s"} behind the Service`,
      }
    : { status: false, reason: Reason.NoReadyEndpoints, message: "no ready Relay endpoint behind the Service" };
}

/**
 * A replica of the Deployment's current pod template is available. Old pods count in
 * availableReplicas during a rollout, so at least one available pod must be beyond what the old
 * ones (replicas - updatedReplicas) could account for.
 */
export function rolledOut(deployment: ObservedDeployment | undefined): boolean {
  const status = deployment?.status;
  if (!deployment || !status) return false;
  const old = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.observedGeneration ?? -1) >= (deployment.metadata.generation ?? 0) &&
    (status.availableReplicas ?? 0) - old > 0
  );
}

/** Ready, or the first reason it is not, in the order a user would fix them. */
function readiness(eligible: Verdict, published: Verdict, listening: Verdict, input: StatusInput): Verdict {
  const { dpr, observed } = input;
  if (!eligible.status) return { status: false, reason: Reason.NotEligible, message: eligible.message };
  if (input.foreign.length > 0) {
    const list = input.foreign.join(", ");
    return {
      status: false,
      reason: Reason.ForeignChild,
      message: `${list} ${input.foreign.length === 1 ? "exists and is" : "exist and are"} not controlled by this DynamoPoolRelay; nothing that needs ${input.foreign.length === 1 ? "it" : "them"} is applied (delete or rename ${input.foreign.length === 1 ? "it" : "them"})`,
    };
  }
  if (input.applyFailure !== undefined)
    return { status: false, reason: Reason.ApplyFailed, message: input.applyFailure };
  if (!input.reflects) {
    return {
      status: false,
      reason: Reason.Reconciling,
      message: `the children do not carry the decision for generation ${dpr.metadata.generation ?? 1} yet`,
    };
  }
  if (!published.status) return { status: false, reason: Reason.ServiceNotPublished, message: published.message };
  if (!rolledOut(observed.deployment)) {
    return {
      status: false,
      reason: Reason.RolloutPending,
      message: "no Relay replica of the current Deployment generation is available yet",
    };
  }
  if (!listening.status) return { status: false, reason: Reason.ListenerUnavailable, message: listening.message };
  return {
    status: true,
    reason: Reason.Ready,
    message: `the Relay listens at ${serviceEndpoint(dpr.metadata.name, dpr.metadata.namespace ?? "default")}`,
  };
}

/**
 * The Relay pods' selector as the scale subresource reports it (status.selector), in the API
 * server's own form: `key=value` requirements sorted by key, as a Deployment's scale shows its
 * selector, so both read the same. It depends only on the name, like the Deployment's selector.
 */
function labelSelector(dgdName: string): string {
  const labels = selectorLabels(dgdName);
  // Sorted by key: the default sort compares UTF-16 code units, as `<` on strings does.
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}`)
    .join(",");
}

/** The sources and connection the previous status reported: still in effect while the children lag. */
function inEffect(
  previous: DynamoPoolRelayStatus,
): Pick<DynamoPoolRelayStatus, "workerNamespaces" | "sourcesRevision" | "connectionRevision"> {
  return {
    ...(previous.workerNamespaces ? { workerNamespaces: previous.workerNamespaces } : {}),
    ...(previous.sourcesRevision ? { sourcesRevision: previous.sourcesRevision } : {}),
    ...(previous.connectionRevision ? { connectionRevision: previous.connectionRevision } : {}),
  };
}

/** The Eligible message of a selection with at least one eligible DGD. */
export function eligibleSelection({ selected, eligible }: { selected: number; eligible: number }): string {
  const of = `${eligible} of the ${selected} DynamoGraphDeployments spec.dgdSelector matches use Kubernetes discovery in Pod mode`;
  return eligible === selected ? of : `${of}; the others are listed in status.excludedDGDs`;
}

/** What a status shows of a selector's selection: its counts, and the first DGDs left out. */
export function selectionFields(
  selection: Selection,
): Pick<DynamoPoolRelayStatus, "selectedDGDs" | "eligibleDGDs" | "excludedDGDs"> {
  return {
    selectedDGDs: selection.selected,
    eligibleDGDs: selection.eligible,
    ...(selection.excluded.length > 0
      ? { excludedDGDs: selection.excluded.slice(0, MAX_EXCLUDED_SHOWN).map((e) => ({ ...e })) }
      : {}),
  };
}

export function computeStatus(input: StatusInput): DynamoPoolRelayStatus {
  const { decision, observed, dpr } = input;
  const previous = input.previous ?? {};
  const common = input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration };
  // Also for a spec the core rejects: the scale subresource, so an HPA, needs it whatever the spec.
  const selector = labelSelector(dpr.metadata.name);
  if (decision.action === "reject") {
    // Children are left as they were, so everything else in the status (readyOfDesired included:
    // the Deployment runs the last valid spec.replicas) still describes them.
    const ready = condition(
      ConditionType.Ready,
      { status: false, reason: decision.reason, message: decision.message },
      input,
    );
    return {
      ...previous,
      ...common,
      labelSelector: selector,
      conditions: [ready, ...(previous.conditions ?? []).filter((c) => c.type !== ConditionType.Ready)],
    };
  }
  const name = `${dpr.metadata.namespace ?? "default"}/${dpr.metadata.name}`;
  const svcName = `${dpr.metadata.name}-pool-relay`;
  const selection = decision.selection;
  const eligible: Verdict =
    decision.action === "apply"
      ? {
          status: true,
          reason: Reason.Eligible,
          message: selection
            ? eligibleSelection(selection)
            : `DynamoGraphDeployment ${name} uses Kubernetes discovery in Pod mode`,
        }
      : { status: false, reason: decision.reason, message: decision.message };
  // For the decision the stored status records, the Service it showed gets the verdict it got.
  const pub =
    observed.service === AS_STORED
      ? (recorded(input.previous, ConditionType.ServicePublished) ?? published("absent", decision, svcName))
      : published(ownership(observed.service, dpr.metadata.uid), decision, svcName);
  const readyCount = readyEndpoints(observed.endpointSlices);
  const lst = listener(readyCount);
  const ready = readiness(eligible, pub, lst, input);
  const verdicts: Record<ConditionType, Verdict> = {
    [ConditionType.Ready]: ready,
    [ConditionType.Eligible]: eligible,
    [ConditionType.ServicePublished]: pub,
    [ConditionType.ListenerAvailable]: lst,
  };
  const depStatus = observed.deployment?.status;
  return {
    ...common,
    conditions: CONDITION_ORDER.map((type) => condition(type, verdicts[type], input)),
    ...(pub.status ? { serviceEndpoint: serviceEndpoint(dpr.metadata.name, dpr.metadata.namespace ?? "default") } : {}),
    replicas: depStatus?.replicas ?? 0,
    readyReplicas: depStatus?.readyReplicas ?? 0,
    // Desired is what the user asked for, as a Deployment's READY uses its own spec.replicas: after
    // `kubectl scale dpr --replicas=3` it reads 2/3 until the third pod is Ready.
    readyOfDesired: `${depStatus?.readyReplicas ?? 0}/${decision.dpr.spec.replicas}`,
    labelSelector: selector,
    ...(selection ? selectionFields(selection) : {}),
    ...(decision.action !== "apply"
      ? {}
      : input.reflects
        ? {
            workerNamespaces: decision.workerNamespaces,
            sourcesRevision: decision.sources.revision,
            connectionRevision: decision.connectionRevision,
            ...(input.sourcesResourceVersion ? { sourcesResourceVersion: input.sourcesResourceVersion } : {}),
          }
        : inEffect(previous)),
  };
}
