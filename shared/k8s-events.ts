/**
 * Kubernetes Events about a DynamoPoolRelay, as `kubectl describe dpr` lists them, each written
 * once: its name derives from the DynamoPoolRelay's UID, generation and what happened, so every
 * invocation deciding the same thing (a redelivery, a duplicate) makes the same name and gets 409.
 */
import { createHash } from "node:crypto";
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { APPLIED_HASH, absentWhenPlanned } from "./apply-plan.ts";
import { ConditionType, type RejectedReason } from "./conditions.ts";
import { API_VERSION, KIND, PRODUCT } from "./names.ts";

/** What happened, before it is addressed to a DynamoPoolRelay. */
export interface Occurrence {
  type: "Normal" | "Warning";
  /** CamelCase, as kubectl shows it in the Reason column. */
  reason: string;
  message: string;
  /** With the UID and the generation, what makes this occurrence this one, and so the Event's name: the kind of reason first. */
  identity: readonly string[];
}

/** The DynamoPoolRelay an Event is about, as read. */
export interface Involved {
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    generation?: number | undefined;
    resourceVersion?: string | undefined;
  };
}

export type KubeEvent = {
  apiVersion: "v1";
  kind: "Event";
  metadata: { name: string; namespace: string };
  involvedObject: { apiVersion: string; kind: string; name: string; namespace: string; uid: string };
  type: Occurrence["type"];
  reason: string;
  message: string;
  source: { component: string };
  reportingComponent: string;
  firstTimestamp: string;
  lastTimestamp: string;
  count: 1;
};

/** The functions that write Events. */
export const Reporter = {
  Apply: `${PRODUCT}/apply`,
  Status: `${PRODUCT}/status`,
} as const;

/** events.k8s.io caps an Event's note at 1 KiB; API server messages quoted in one can be longer. */
export const MAX_MESSAGE_BYTES = 1024;
const ELLIPSIS = "...";

function truncate(message: string): string {
  if (Buffer.byteLength(message) <= MAX_MESSAGE_BYTES) return message;
  let out = "";
  let bytes = Buffer.byteLength(ELLIPSIS);
  // By code point, so no character is cut in half.
  for (const ch of message) {
    bytes += Buffer.byteLength(ch);
    if (bytes > MAX_MESSAGE_BYTES) break;
    out += ch;
  }
  return out + ELLIPSIS;
}

/** `<name>.<16 hex>`, the form client-go's recorder gives Event names (there a timestamp); a DynamoPoolRelay name leaves room for it. */
export function eventName(dpr: Involved, occurrence: Pick<Occurrence, "identity">): string {
  const parts = [dpr.metadata.uid ?? "", String(dpr.metadata.generation ?? 1), ...occurrence.identity];
  return `${dpr.metadata.name}.${createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 16)}`;
}

export function renderEvent(dpr: Involved, occurrence: Occurrence, reporter: string, time: string): KubeEvent {
  const namespace = dpr.metadata.namespace ?? "default";
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: eventName(dpr, occurrence), namespace },
    involvedObject: {
      apiVersion: API_VERSION,
      kind: KIND,
      name: dpr.metadata.name,
      namespace,
      uid: dpr.metadata.uid ?? "",
    },
    type: occurrence.type,
    reason: occurrence.reason,
    message: truncate(occurrence.message),
    source: { component: reporter },
    reportingComponent: reporter,
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

/** A child as the apply function wrote it: its intent hash, and the resourceVersion it was pinned to when it already existed. */
export interface AppliedChild {
  kind: string;
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
}

/**
 * Children written (`written`, of all the decision wants, `desired`).
 *
 * `Published` when the Service was created, i.e. the Relay just became reachable: one per Service
 * object, named by the UID the API server gave it (`serviceUid`), as a withdrawal is by the UID it
 * deleted. However many applies raced to create it, they all got that one object back.
 *
 * Otherwise `Applied`, whose identity is the decision (every child's intent hash) taken from this
 * version of the DynamoPoolRelay: applies that decide the same from the same reading are one
 * occurrence, even when one of them already saw some children written by the other (and so wrote
 * less). Every status write gives the DynamoPoolRelay a new version, so the same decision made
 * again later (a DGD rolled back and forth, a deleted child put back) is a new occurrence.
 */
export function applied(
  dpr: Involved,
  written: readonly AppliedChild[],
  desired: readonly AppliedChild[],
  serviceUid: string | undefined,
): Occurrence {
  const kinds = written.map((c) => c.kind).join(", ");
  const generation = dpr.metadata.generation ?? 1;
  const created = written.find((c) => c.kind === "Service" && absentWhenPlanned(c));
  if (created) {
    return {
      type: "Normal",
      reason: "Published",
      message: `Service ${created.metadata.name} published; applied ${kinds} for generation ${generation}`,
      identity: ["Published", serviceUid ?? ""],
    };
  }
  return {
    type: "Normal",
    reason: "Applied",
    message: `applied ${kinds} for generation ${generation}`,
    identity: [
      "Applied",
      dpr.metadata.resourceVersion ?? "",
      ...desired.map((c) => `${c.kind}#${c.metadata.annotations?.[APPLIED_HASH] ?? ""}`),
    ],
  };
}

/** The Service deleted. A Service object is deleted once: its UID tells one withdrawal from another. */
export function withdrawn(serviceName: string, serviceUid: string, why: string): Occurrence {
  return {
    type: "Normal",
    reason: "Withdrawn",
    message: `Service ${serviceName} withdrawn: ${why}`,
    identity: ["Withdrawn", serviceUid],
  };
}

/** The spec rejected, by the core or by the API server: reported once per generation. */
export function rejected(reason: RejectedReason, message: string): Occurrence {
  return { type: "Warning", reason, message, identity: [reason] };
}

/** Children left alone because someone else controls them (or what they need): once per generation and set of kinds. */
export function foreignChildren(skipped: readonly { kind: string; reason: string }[]): Occurrence {
  return {
    type: "Warning",
    reason: "ForeignChild",
    message: skipped.map((s) => s.reason).join("; "),
    identity: ["ForeignChild", ...skipped.map((s) => s.kind).sort()],
  };
}

/**
 * Ready turned True or False, from the status read to the status written. A new DynamoPoolRelay
 * starting not Ready is no change. The resourceVersion the write replaced tells transitions apart:
 * a status write from one version succeeds once, so a transition is written once.
 */
export function readyTransition(
  previous: DynamoPoolRelayStatus | undefined,
  next: DynamoPoolRelayStatus,
  replacedResourceVersion: string | undefined,
): Occurrence | undefined {
  const ready = (s: DynamoPoolRelayStatus | undefined) => s?.conditions?.find((c) => c.type === ConditionType.Ready);
  const before = ready(previous);
  const after = ready(next);
  if (!after || after.status === before?.status || (!before && after.status !== "True")) return undefined;
  const isReady = after.status === "True";
  return {
    type: isReady ? "Normal" : "Warning",
    reason: isReady ? "Ready" : "NotReady",
    message: isReady
      ? `Ready is True: ${after.message}`
      : `Ready is ${after.status} (${after.reason}): ${after.message}`,
    identity: ["Ready", after.status, replacedResourceVersion ?? ""],
  };
}
