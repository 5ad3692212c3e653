/**
 * Event classification: which events each function handles, and which DynamoPoolRelay an event is
 * about. Input a function cannot handle is a permanent failure, with the HTTP status to answer.
 */
import type { CloudEvent } from "./cloudevent.ts";
import { Reason } from "./conditions.ts";
import { MAX_DGD_NAME_LENGTH, canPair } from "./names.ts";
import {
  APISERVER_TYPES,
  ApiServerObject,
  AppliedData,
  EventType,
  ReconcileData,
  RejectedData,
  SourceEventType,
  WithdrawnData,
  childOwnerKey,
  parseData,
  type DprKey,
} from "./events.ts";
import { lastWrittenByApply } from "./last-write.ts";
import { childVersion, type ChildVersion } from "./seen-versions.ts";
import { readyEndpoints, type ObservedDeployment, type ObservedEndpointSlice } from "./status.ts";
import type { LiveObject } from "./apply-plan.ts";
import { compareResourceVersions } from "./resource-version.ts";
import { observedInEvent } from "./resync.ts";
import { COVERS, coveredObjects } from "./source-events.ts";
import type * as z from "./zod.ts";

export type Classified<T> = { ok: true; value: T } | { ok: false; status: 400 | 422; error: string };

const wrongType = (fn: string, handled: string, event: CloudEvent) =>
  ({ ok: false, status: 400, error: `${fn} handles ${handled}, got type ${event.type}` }) as const;

function data<T>(
  event: CloudEvent,
  parse: (e: CloudEvent) => { ok: true; value: T } | { ok: false; error: string },
): Classified<T> {
  const r = parse(event);
  return r.ok ? r : { ok: false, status: 422, error: r.error };
}

/**
 * `unpairable`: a DGD whose name no DynamoPoolRelay can have, so there is nothing to read. A DGD
 * event carries the object as the source saw it (`observed`, absent for a delete): a hint that may
 * only ever skip work (shared/vouched-status.ts, changesNothing), never feed a write.
 */
export type EligibilityInput =
  | { kind: "dgd"; key: DprKey; observed: unknown }
  | { kind: "unpairable"; namespace: string; name: string }
  | { kind: "resync" };

/** A change event of one kind, parsed: the object's key, and the object as the event carries it (absent for a delete). */
function changeOf(
  fn: string,
  kind: string,
  event: CloudEvent,
): Classified<{ namespace: string; name: string; observed: unknown }> {
  const obj = data(event, (e) => parseData(e, ApiServerObject));
  if (!obj.ok) return obj;
  if (obj.value.kind !== kind)
    return { ok: false, status: 422, error: `${fn} handles ${kind} change events, got kind ${obj.value.kind}` };
  const { namespace, name } = obj.value.metadata;
  return {
    ok: true,
    value: { namespace, name, observed: event.type === SourceEventType.Delete ? undefined : event.data },
  };
}

export function classifyForEligibility(event: CloudEvent): Classified<EligibilityInput> {
  if (event.type === SourceEventType.Ping) return { ok: true, value: { kind: "resync" } };
  if (!APISERVER_TYPES.includes(event.type))
    return wrongType("eligibility", `${APISERVER_TYPES.join(", ")} and ${SourceEventType.Ping}`, event);
  const change = changeOf("eligibility", "DynamoGraphDeployment", event);
  if (!change.ok) return change;
  const { namespace, name, observed } = change.value;
  if (!canPair(name)) return { ok: true, value: { kind: "unpairable", namespace, name } };
  return { ok: true, value: { kind: "dgd", key: { namespace, name }, observed } };
}

/**
 * A reconcile request, or a DynamoPoolRelay's change event from the product's source, which is a
 * request of cause `DPRChanged` (the source sends only those of a generation not yet observed:
 * shared/source-events.ts, sent). `observed`: the event shows the generation observed, or the
 * object deleted (shared/resync.ts, observedInEvent), a hint that may only skip the run.
 */
export type ApplyInput = ReconcileData & { observed?: true };

export function classifyForApply(event: CloudEvent): Classified<ApplyInput> {
  if (APISERVER_TYPES.includes(event.type)) {
    const change = changeOf("apply", "DynamoPoolRelay", event);
    if (!change.ok) return change;
    const { namespace, name, observed } = change.value;
    if (!canPair(name))
      return {
        ok: false,
        status: 422,
        error: `DynamoPoolRelay ${namespace}/${name}: the name cannot be a DynamoPoolRelay's (a DNS-1035 label of at most ${MAX_DGD_NAME_LENGTH} characters)`,
      };
    const key: ApplyInput = { namespace, name, cause: "DPRChanged" };
    return {
      ok: true,
      value: observedInEvent(observed, event.type === SourceEventType.Delete) ? { ...key, observed: true } : key,
    };
  }
  if (event.type !== EventType.Reconcile)
    return wrongType("apply", `${EventType.Reconcile} and DynamoPoolRelay change events`, event);
  return data(event, (e) => parseData(e, ReconcileData));
}

export const STATUS_CHILD_KINDS = ["ConfigMap", "Deployment", "Service", "EndpointSlice"];
const REPORTS = [EventType.Applied, EventType.Withdrawn, EventType.Rejected] as const;

export interface StatusInput {
  key: DprKey;
  /** The kinds of the children whose change events this is (none for a report from apply). */
  changed: readonly string[];
  /**
   * What status reads of the child an add or update event carries: a hint that may only skip work
   * (what this process already computed the status from), never feed a write. Absent for a delete.
   */
  version?: ChildVersion;
  /**
   * The child as the event carries it was last written by apply, which showed it in the status
   * or reports for a run that reads it (shared/last-write.ts): a hint that may only skip work.
   */
  awaitsReport?: true;
  /**
   * An EndpointSlice added with no ready endpoint: status shows how many ready endpoints there are,
   * which an empty slice leaves as it was, and its endpoints turning ready come as updates. The
   * slice of a Service apply just created is added so while apply still runs: a status run for it
   * would read the children only to race apply's own status write (apply would then report).
   */
  addsNoEndpoint?: true;
  /**
   * The Relay Deployment as its add or update event carries it, or as the newest of the events a
   * run answers carry it (all of them Deployment events): what status compares with the stored
   * status before reading any child (shared/read-plan.ts, deploymentShown). A hint that may only
   * skip work, never feed a write.
   */
  deployment?: LiveObject & ObservedDeployment;
  /**
   * A report from apply is among the events this input answers: apply did not show what its writes
   * make (its status write lost to a concurrent one, or it did not try), so the stored status may
   * record a decision its children no longer carry, and the run reads the DGD and every child.
   * Kept when inputs merge: a report sharing a run with the Deployment's changes as its pods start
   * must not make it a run of the shown children only (shared/read-plan.ts, shownOnly).
   */
  report?: true;
  /** An apply the API server refused, as reported; status shows it only while the world agrees. */
  failure?: ReportedFailure;
  /**
   * A report from an apply that wrote the status its writes make, over the version it read before
   * any child (functions/apply/handler.ts): nothing is left to show.
   */
  shownByApply?: true;
}

export interface ReportedFailure {
  uid: string;
  generation: number;
  message: string;
}

export function classifyForStatus(event: CloudEvent): Classified<StatusInput> {
  if (event.type === EventType.Rejected) {
    const report = data(event, (e) => parseData(e, RejectedData));
    if (!report.ok) return report;
    const { namespace, name, reason, uid, generation, message } = report.value;
    const failure = reason === Reason.ApplyFailed ? { failure: { uid, generation, message } } : {};
    return { ok: true, value: { key: { namespace, name }, changed: [], report: true, ...failure } };
  }
  if (event.type === EventType.Applied || event.type === EventType.Withdrawn) {
    const schema: z.ZodMiniType<DprKey & { statusWritten?: true }> =
      event.type === EventType.Applied ? AppliedData : WithdrawnData;
    const report = data(event, (e) => parseData(e, schema));
    if (!report.ok) return report;
    const { namespace, name, statusWritten } = report.value;
    return {
      ok: true,
      value: { key: { namespace, name }, changed: [], report: true, ...(statusWritten ? { shownByApply: true } : {}) },
    };
  }
  if (!APISERVER_TYPES.includes(event.type))
    return wrongType("status", `${REPORTS.join(", ")} and child resource events`, event);
  const obj = data(event, (e) => parseData(e, ApiServerObject));
  if (!obj.ok) return obj;
  if (!STATUS_CHILD_KINDS.includes(obj.value.kind))
    return {
      ok: false,
      status: 422,
      error: `status handles ${STATUS_CHILD_KINDS.join(", ")} events, got kind ${obj.value.kind}`,
    };
  const key = childOwnerKey(obj.value);
  if (!key)
    return {
      ok: false,
      status: 422,
      error: `${obj.value.kind} ${obj.value.metadata.namespace}/${obj.value.metadata.name} is not managed by dynamo-pool-relay`,
    };
  const { kind, metadata } = obj.value;
  // An event standing for other children's changes too (shared/source-events.ts, merged): a run
  // that reads for every kind changed, taking no shortcut this one object's version would allow.
  const covered = coveredObjects(event).map((o) => o.kind);
  const foreign = covered.find((k) => !STATUS_CHILD_KINDS.includes(k));
  if (foreign !== undefined)
    return {
      ok: false,
      status: 422,
      error: `extension ${COVERS} names a ${foreign || "kindless object"}; status handles ${STATUS_CHILD_KINDS.join(", ")}`,
    };
  if (covered.length > 0) return { ok: true, value: { key, changed: [...new Set([kind, ...covered])] } };
  if (event.type === SourceEventType.Delete) return { ok: true, value: { key, changed: [kind] } };
  const version = childVersion(kind, metadata.name, obj.value);
  if (
    event.type === SourceEventType.Add &&
    kind === "EndpointSlice" &&
    readyEndpoints([obj.value as ObservedEndpointSlice]) === 0
  )
    return { ok: true, value: { key, changed: [kind], version, addsNoEndpoint: true } };
  const deployment = kind === "Deployment" ? { deployment: obj.value as LiveObject & ObservedDeployment } : {};
  return {
    ok: true,
    value: {
      key,
      changed: [kind],
      version,
      ...deployment,
      ...(lastWrittenByApply(obj.value) ? { awaitsReport: true } : {}),
    },
  };
}

/** The newer of two Deployments events carry; none when either event carries none or their versions do not compare. */
function newerDeployment(
  earlier: StatusInput["deployment"],
  later: StatusInput["deployment"],
): StatusInput["deployment"] {
  if (!earlier || !later) return undefined;
  const order = compareResourceVersions(earlier.metadata["resourceVersion"], later.metadata["resourceVersion"]);
  return order === undefined ? undefined : order > 0 ? earlier : later;
}

/**
 * The input of one status run shared by several events about one DynamoPoolRelay: every changed
 * kind is judged for drift, a report among them makes the run read everything, the latest
 * reported apply failure is shown, and the newest Deployment is compared with the stored status.
 */
export function mergeStatusInputs(earlier: StatusInput | undefined, later: StatusInput): StatusInput {
  if (!earlier) return later;
  const failure = later.failure ?? earlier.failure;
  const report = earlier.report || later.report;
  const deployment = newerDeployment(earlier.deployment, later.deployment);
  return {
    key: later.key,
    changed: [...new Set([...earlier.changed, ...later.changed])],
    ...(report ? { report } : {}),
    ...(failure ? { failure } : {}),
    ...(deployment ? { deployment } : {}),
  };
}
