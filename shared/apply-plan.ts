/**
 * What the apply function writes: only children missing or differing from the desired state, never
 * one someone else controls. Each carries the hash of the product's intent, so a change is seen
 * without a server round trip.
 */
import { stableJson } from "./connection-revision.ts";
import { controlledBy } from "./ownership.ts";
import { sameQuantity } from "./quantity.ts";
import type { Decision } from "./decide.ts";
import type { VouchedSources } from "./vouched-status.ts";
import { renderChild, renderChildren, type ChildKind, type KubeObject } from "./render/index.ts";
import { sha256Hex } from "./sources-document.ts";

export const APPLIED_HASH = "poolrelay.dynamo.nvidia.com/applied-hash";

export interface LiveObject {
  metadata: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean }[];
    deletionTimestamp?: string;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

export function withAppliedHash(obj: KubeObject): KubeObject {
  const hash = sha256Hex(stableJson(obj));
  const annotations = {
    ...((obj.metadata as { annotations?: Record<string, string> }).annotations ?? {}),
    [APPLIED_HASH]: hash,
  };
  return { ...obj, metadata: { ...obj.metadata, annotations } } as KubeObject;
}

/** Resource lists (`requests`, `limits`) hold quantities, compared by value. */
const QUANTITY_MAPS = new Set(["requests", "limits"]);

const named = (items: unknown[]): items is { name: string }[] =>
  items.every((i) => i !== null && typeof i === "object" && typeof (i as { name?: unknown }).name === "string");

/**
 * Every value in `desired` is present and equal in `live`; fields only the API server set are
 * ignored. A zero value (false, 0, "") may be absent: the API server omits non-pointer zero fields
 * (e.g. a Service's publishNotReadyAddresses: false). Lists of named items (containers, env,
 * ports, volumes) are matched by name, so an entry another party adds (a mutating webhook's
 * sidecar or variable) is not a difference; other lists must match in order and length.
 */
export function isSubset(desired: unknown, live: unknown, key?: string): boolean {
  if (live === undefined && (desired === false || desired === 0 || desired === "")) return true;
  if (Array.isArray(desired)) {
    if (!Array.isArray(live)) return false;
    if (desired.length > 0 && named(desired) && named(live)) {
      return desired.every((d) =>
        isSubset(
          d,
          live.find((l) => l.name === d.name),
        ),
      );
    }
    return live.length === desired.length && desired.every((d, i) => isSubset(d, live[i]));
  }
  if (desired !== null && typeof desired === "object") {
    if (live === null || typeof live !== "object" || Array.isArray(live)) return false;
    const quantities = key !== undefined && QUANTITY_MAPS.has(key);
    return Object.entries(desired).every(([k, v]) => {
      const l = (live as Record<string, unknown>)[k];
      return quantities ? sameQuantity(v, l) : isSubset(v, l, k);
    });
  }
  return desired === live;
}

export type ChildState = "absent" | "current" | "stale" | "foreign";

/** @param desired a rendered child with its applied hash */
export function childState(desired: KubeObject, live: LiveObject | undefined, dprUid: string | undefined): ChildState {
  if (!live) return "absent";
  if (!controlledBy(live, dprUid)) return "foreign";
  const { metadata, ...body } = desired as KubeObject & { metadata: { annotations: Record<string, string> } };
  const same =
    live.metadata.annotations?.[APPLIED_HASH] === metadata.annotations[APPLIED_HASH] &&
    isSubset(metadata.labels, live.metadata.labels ?? {}) &&
    isSubset(body, live) &&
    live.metadata.deletionTimestamp === undefined;
  return same ? "current" : "stale";
}

/**
 * What each child needs from the others: a RoleBinding binds our ServiceAccount to our Role, the
 * Relay pods run as that ServiceAccount with that binding and mount the ConfigMap, the Service
 * exposes those pods. A child whose need is foreign (or itself blocked) is not applied: it would
 * run with, bind or expose someone else's object.
 */
export const NEEDS: Readonly<Record<string, readonly string[]>> = {
  RoleBinding: ["ServiceAccount", "Role"],
  Deployment: ["ServiceAccount", "ConfigMap", "RoleBinding"],
  Service: ["Deployment"],
};

/** The foreign child that keeps `kind` from being applied, directly or through what it needs. */
export function blockedBy(kind: string, foreign: ReadonlySet<string>): string | undefined {
  for (const need of NEEDS[kind] ?? []) {
    if (foreign.has(need)) return need;
    const deeper = blockedBy(need, foreign);
    if (deeper) return deeper;
  }
  return undefined;
}

/**
 * The plan's writes in waves, each sent at once: a child goes in a wave after every child it needs
 * (NEEDS, through the children between) that the plan writes too, so pods never start without
 * their ServiceAccount, ConfigMap or binding, the API server can resolve a RoleBinding's Role, and
 * the Service publishes only a Deployment that exists. A full creation takes 4 round trips, not 6.
 */
export function writeWaves<T extends { object: { kind: string } }>(apply: readonly T[]): T[][] {
  const written = new Set(apply.map((a) => a.object.kind));
  const wave = (kind: string): number =>
    Math.max(0, ...(NEEDS[kind] ?? []).map((need) => wave(need) + (written.has(need) ? 1 : 0)));
  // No wave is left empty: a child in wave n needs one the plan writes in wave n - 1.
  const waves: T[][] = [];
  for (const a of apply) (waves[wave(a.object.kind)] ??= []).push(a);
  return waves;
}

const foreignKinds = (
  desired: readonly KubeObject[],
  live: readonly (LiveObject | undefined)[],
  dprUid: string | undefined,
) => new Set(desired.filter((_d, i) => live[i] !== undefined && !controlledBy(live[i], dprUid)).map((d) => d.kind));

/**
 * A stale child is applied only over the very version this decision was made from: two applies
 * that read different DGD states race, and the one that read the older state must fail (409, so
 * it is redelivered and decides again) instead of writing an older sources document last.
 */
function pinnedTo(obj: KubeObject, live: LiveObject): KubeObject {
  const resourceVersion = live.metadata["resourceVersion"];
  return typeof resourceVersion === "string"
    ? ({ ...obj, metadata: { ...obj.metadata, resourceVersion } } as KubeObject)
    : obj;
}

export interface ApplyPlan {
  /**
   * Force takes fields other managers own: only on children this DynamoPoolRelay already
   * controls, pinned to the resourceVersion read. An absent child is applied without it, so one someone else creates in the meantime
   * conflicts (409, retried, then seen as foreign) instead of being taken over.
   */
  apply: { object: KubeObject; force: boolean }[];
  unchanged: string[];
  skipped: { kind: string; reason: string }[];
}

/** @param live the observed child for each desired one, in the same order (undefined when absent) */
export function planApply(
  desired: readonly KubeObject[],
  live: readonly (LiveObject | undefined)[],
  dprUid: string | undefined,
): ApplyPlan {
  const plan: ApplyPlan = { apply: [], unchanged: [], skipped: [] };
  const foreign = foreignKinds(desired, live, dprUid);
  desired.forEach((obj, i) => {
    const state = childState(obj, live[i], dprUid);
    const blocker = blockedBy(obj.kind, foreign);
    if (state === "foreign")
      plan.skipped.push({
        kind: obj.kind,
        reason: `${obj.kind} ${obj.metadata.name} exists and is not controlled by this DynamoPoolRelay`,
      });
    else if (blocker)
      plan.skipped.push({
        kind: obj.kind,
        reason: `${obj.kind} ${obj.metadata.name} is not applied: it needs ${blocker} ${obj.metadata.name}, which is not controlled by this DynamoPoolRelay`,
      });
    else if (state === "current") plan.unchanged.push(obj.kind);
    else if (state === "stale") plan.apply.push({ object: pinnedTo(obj, live[i]!), force: true });
    else plan.apply.push({ object: obj, force: false });
  });
  return plan;
}

/**
 * A resourceVersion no stored object carries: the API server's versions are etcd revisions, which
 * start at 1 and give the first write 2. Server-side applied with it, an absent child is created
 * (an apply creates a missing object whatever version it names) and one that exists is refused
 * (409), whoever controls it. Unlike a POST, which records the field manager as an Update, the
 * create records it as an Apply: a later apply that stops setting a field removes it.
 */
export const NO_STORED_VERSION = "1";

/** A planned child that was absent: applied over no version read (planApply pins every other one to the version it read). */
export const absentWhenPlanned = (child: { metadata: { resourceVersion?: string } }): boolean =>
  child.metadata.resourceVersion === undefined || child.metadata.resourceVersion === NO_STORED_VERSION;

/**
 * No status showed these children (no sources revision, no Relay replica: a new DynamoPoolRelay,
 * or one only ever withdrawn): most likely all absent, so apply creates them unread (planAbsent).
 */
export function childrenNeverShown(dpr: { status?: { sourcesRevision?: string; replicas?: number } }): boolean {
  return dpr.status?.sourcesRevision === undefined && (dpr.status?.replicas ?? 0) === 0;
}

/** Every child created without being read, and only if absent: one that exists refuses (409), and every child is read. */
export function planAbsent(desired: readonly KubeObject[]): ApplyPlan {
  const apply = desired.map((d) => ({
    object: { ...d, metadata: { ...d.metadata, resourceVersion: NO_STORED_VERSION } } as KubeObject,
    force: false,
  }));
  return { apply, unchanged: [], skipped: [] };
}

/**
 * The plan of a rollout that reads no child (shared/vouched-status.ts, sourcesOnly): every child but the
 * ConfigMap is as the stored status vouched; the ConfigMap is written, over the version the status
 * found it at and so forced as a child this DynamoPoolRelay controls, only when the decision's
 * sources document is not the one it carries.
 */
export function planSources(
  desired: readonly KubeObject[],
  decision: Extract<Decision, { action: "apply" }>,
  vouched: VouchedSources,
): ApplyPlan {
  const kinds = desired.map((d) => d.kind);
  if (decision.sources.revision === vouched.sourcesRevision) return { apply: [], unchanged: kinds, skipped: [] };
  const configMap = desired.find((d) => d.kind === "ConfigMap")!;
  const object = {
    ...configMap,
    metadata: { ...configMap.metadata, resourceVersion: vouched.resourceVersion },
  } as KubeObject;
  return { apply: [{ object, force: true }], unchanged: kinds.filter((k) => k !== "ConfigMap"), skipped: [] };
}

/**
 * Whether the children carry the decision: all of them, or only those of the `kinds` given (a foreign
 * or missing child of another kind still blocks what needs it).
 */
export function reflectsDecision(
  decision: Decision,
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, LiveObject | undefined>,
  dprUid: string | undefined,
  kinds?: ReadonlySet<string>,
): boolean {
  if (decision.action === "reject") return true;
  const judged = (kind: string) => kinds === undefined || kinds.has(kind);
  const service = live.get("Service");
  if (decision.action === "withdraw") return !judged("Service") || !service || !controlledBy(service, dprUid);
  const observed = desired.filter((d) => live.has(d.kind));
  const foreign = foreignKinds(
    observed,
    observed.map((d) => live.get(d.kind)),
    dprUid,
  );
  return observed
    .filter((d) => judged(d.kind))
    .every(
      (d) =>
        foreign.has(d.kind) ||
        blockedBy(d.kind, foreign) !== undefined ||
        childState(d, live.get(d.kind), dprUid) === "current",
    );
}

/** The observed children, other than the Service (its own condition reports it), that someone else controls. */
export function foreignChildren(
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, LiveObject | undefined>,
  dprUid: string | undefined,
): string[] {
  return desired
    .filter((d) => d.kind !== "Service" && live.get(d.kind) !== undefined && !controlledBy(live.get(d.kind)!, dprUid))
    .map((d) => `${d.kind} ${d.metadata.name}`);
}

/** The children an apply decision wants, each with the hash of that intent. */
export function desiredChildren(decision: Extract<Decision, { action: "apply" }>): KubeObject[] {
  return renderChildren(decision).map(withAppliedHash);
}

/** The one child of this kind an apply decision wants, with the hash of that intent. */
export function desiredChild(decision: Extract<Decision, { action: "apply" }>, kind: ChildKind): KubeObject {
  return withAppliedHash(renderChild(decision, kind));
}
