/**
 * What the event source keeps of each object it watches: only what its judgment of a pair reads
 * (shared/requeue.ts, requeueReason), so that its memory grows with the pairs, not with the
 * objects' size.
 *
 * - A DynamoPoolRelay: its identity and spec, and of its status what the decisions read (the
 *   conditions' types, statuses and reasons, the revisions and worker namespaces) with a digest of
 *   the whole (`shown`), against which the status the children would make is compared.
 * - A DGD: its version, and what it decides (its worker namespaces, or why it is not eligible)
 *   once a DynamoPoolRelay pairs with it.
 * - A child: its version and controller, a digest of what status reads of it, the counts status
 *   shows, and whether its body carries the intent its applied-hash annotation names, judged once
 *   when it is seen, against the decisions the source knew then (`intent`).
 */
import type { Condition } from "./api/kubernetes.ts";
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";
import { LabelSelector } from "./api/label-selector.ts";
import { APPLIED_HASH, childState, desiredChild, type LiveObject } from "./apply-plan.ts";
import { stableJson } from "./connection-revision.ts";
import { dgdVerdict, selectedVerdict, type Decision, type DgdVerdict } from "./decide.ts";
import type { OperatorDefaults } from "./eligibility.ts";
import { childName, LABEL_INSTANCE, LABEL_MANAGED_BY, PRODUCT } from "./names.ts";
import { CHILD_KINDS, type ChildKind, type KubeObject } from "./render/index.ts";
import { statusDigest } from "./seen-versions.ts";
import { sha256Hex } from "./sources-document.ts";
import type { ObservedDeployment } from "./status.ts";

/**
 * Hex digits kept of a digest or an applied hash: 48 bits, enough to tell two versions of one
 * object apart. Shorter than 13 characters, a slice is a string of its own (V8 keeps a longer one
 * as a view of the whole hash, all 64 characters).
 */
export const HASH_CHARS = 12;
const short = (hash: string) => hash.slice(0, HASH_CHARS);

/**
 * A string of its own characters: one built from parts (a template) is a chain of them in V8, each
 * part an object of its own, which a kept view would keep.
 */
export const flat = (s: string): string => Buffer.from(s, "utf8").toString("utf8");

/** One instance of each recurring string (kinds, condition types and reasons, namespaces, images): a view holds references, not copies. */
const interned = new Map<string, string>();
const MAX_INTERNED = 65_536;
function intern<T extends string | undefined>(s: T): T {
  if (s === undefined) return s;
  const known = interned.get(s);
  if (known !== undefined) return known as T;
  if (interned.size < MAX_INTERNED) interned.set(s, s);
  return s;
}

/** A watched object as it comes from a list or a watch. */
export interface Seen {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; controller?: boolean }[];
  };
  [field: string]: unknown;
}

/** A DynamoPoolRelay as the source keeps it: what the decisions read, and `shown`, the digest of its whole status. */
export interface DprView {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    resourceVersion?: string | undefined;
    generation?: number | undefined;
    deletionTimestamp?: string;
  };
  spec?: unknown;
  status?: DynamoPoolRelayStatus | undefined;
  shown?: string | undefined;
}

/**
 * A status as it is compared: all of it but the conditions' transition times, which a status that
 * changed in nothing else never changes.
 */
export function shownDigest(status: DynamoPoolRelayStatus | undefined): string {
  const conditions = status?.conditions?.map(({ lastTransitionTime: _t, ...c }) => c);
  return short(sha256Hex(stableJson({ ...status, ...(conditions ? { conditions } : {}) })));
}

/**
 * What the decisions read of a stored condition: its type, status and reason, and the message of
 * an Eligible condition that is False (a withdrawal's decision carries it; shared/vouched-status.ts,
 * recordedDecision). Its other messages and its time are the digest's.
 */
function keptCondition(c: Condition): Condition {
  const message = c.type === "Eligible" && c.status === "False" ? c.message : "";
  const kept = {
    type: c.type,
    status: c.status,
    reason: c.reason,
    lastTransitionTime: "",
    message,
    ...(c.observedGeneration === undefined ? {} : { observedGeneration: c.observedGeneration }),
  };
  // Pairs share their conditions' few forms: one object each (never changed: a view is replaced, not edited).
  const key = stableJson(kept);
  const known = sharedConditions.get(key);
  if (known) return known;
  if (sharedConditions.size < MAX_INTERNED) sharedConditions.set(key, Object.freeze(kept));
  return kept;
}
const sharedConditions = new Map<string, Condition>();

export function dprView(obj: Seen): DprView {
  const { name, namespace, uid, resourceVersion, generation, deletionTimestamp } = obj.metadata;
  const metadata = deletionTimestamp
    ? { name, namespace: intern(namespace), uid, resourceVersion, generation, deletionTimestamp }
    : { name, namespace: intern(namespace), uid, resourceVersion, generation };
  const stored = obj["status"] as DynamoPoolRelayStatus | undefined;
  const { apiVersion, kind } = obj;
  if (!stored)
    return {
      apiVersion: intern(apiVersion),
      kind: intern(kind),
      metadata,
      spec: internedSpec(obj["spec"]),
      status: undefined,
      shown: undefined,
    };
  const {
    observedGeneration,
    conditions,
    workerNamespaces,
    sourcesRevision,
    connectionRevision,
    sourcesResourceVersion,
    selectedDGDs,
    eligibleDGDs,
    excludedDGDs,
  } = stored;
  // Undefined fields kept, not deleted: deleting a field leaves an object in V8's slow, larger form.
  // The connection revision is the spec's: pairs of one spec share it. A selector's status keeps
  // its selection, which its recorded decision is made again from (shared/vouched-status.ts): a
  // second shape, for those DynamoPoolRelays only.
  const status = {
    observedGeneration,
    conditions: conditions?.map(keptCondition),
    workerNamespaces,
    sourcesRevision,
    connectionRevision: intern(connectionRevision),
    sourcesResourceVersion,
    ...(selectedDGDs === undefined ? {} : { selectedDGDs, eligibleDGDs, excludedDGDs }),
  };
  return {
    apiVersion: intern(apiVersion),
    kind: intern(kind),
    metadata,
    spec: internedSpec(obj["spec"]),
    status,
    shown: shownDigest(stored),
  };
}

/** A spec's strings that pairs share (image, cluster ID), interned in place: the spec is the view's own copy. */
function internedSpec(spec: unknown): unknown {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return spec;
  const fields = spec as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) if (typeof v === "string") fields[k] = intern(v);
  return spec;
}

/**
 * A DGD: its version, what it decides once a DynamoPoolRelay pairs with it (`verdict`), and, in a
 * namespace where a DynamoPoolRelay selects DGDs by label, what a selector reads (`selection`).
 */
export interface DgdView {
  resourceVersion?: string | undefined;
  verdict?: DgdVerdict;
  selection?: SelectionView;
}

/** What a selector reads of a DGD: its labels, and what it decides whatever its name (decide.ts, selectedVerdict). */
export interface SelectionView {
  labels: Record<string, string>;
  verdict: DgdVerdict;
}

const compact = (verdict: DgdVerdict): DgdVerdict =>
  verdict.eligible
    ? { eligible: true, namespaces: verdict.namespaces.map(flat) }
    : { ...verdict, reason: intern(verdict.reason) };

/**
 * @param paired whether a DynamoPoolRelay of its name is known: only then is its verdict kept.
 * @param selecting whether a DynamoPoolRelay of its namespace selects DGDs by label: only then are its labels kept.
 */
export function dgdView(obj: Seen, paired: boolean, settings: OperatorDefaults, selecting = false): DgdView {
  const resourceVersion = obj.metadata.resourceVersion;
  const view: DgdView = paired
    ? { resourceVersion, verdict: compact(dgdVerdict(obj.metadata.name, obj, settings)) }
    : { resourceVersion };
  if (!selecting) return view;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj.metadata.labels ?? {})) labels[intern(k)] = intern(v);
  return { ...view, selection: { labels, verdict: compact(selectedVerdict(obj, settings)) } };
}

/** The counts status shows of a Deployment (ObservedDeployment, flat). */
export interface DeploymentCounts {
  generation?: number | undefined;
  observedGeneration?: number | undefined;
  replicas?: number | undefined;
  updatedReplicas?: number | undefined;
  readyReplicas?: number | undefined;
  availableReplicas?: number | undefined;
}

/** What a child is; the kinds' names are interned. */
export interface ChildView {
  kind: string;
  resourceVersion: string | undefined;
  /** The UID of its controller reference. */
  controller: string | undefined;
  /**
   * Its applied-hash annotation, shortened, and then `+` when its body carries the intent it names,
   * `-` when it does not, `?` when no decision the source knew rendered that intent.
   */
  intent: string | undefined;
  /** What only some children have: most have none, and keep no object for it. */
  more: ChildMore | undefined;
}

export interface ChildMore {
  /** Its name, when it is not its pair's children's (`<pair>-pool-relay`): an EndpointSlice's. */
  name?: string | undefined;
  /**
   * A Deployment's or an EndpointSlice's statusDigest, shortened: whether an update changes what
   * status reads (shared/source-events.ts, sent). Any other kind's update changes it.
   */
  digest?: string | undefined;
  deleting?: true | undefined;
  deployment?: DeploymentCounts | undefined;
  /** An EndpointSlice: its Service, when not the pair's, and its ready endpoints. */
  service?: string | undefined;
  ready?: number | undefined;
}

/** A child's name: its own, or its pair's children's. */
export const nameOf = (view: ChildView, pairName: string): string => view.more?.name ?? childName(pairName);

/** The pair a child belongs to (`namespace/name`), from the labels the product gives its children; undefined for none. */
export function pairOf(obj: Seen): string | undefined {
  const labels = obj.metadata.labels ?? {};
  const instance = labels[LABEL_INSTANCE];
  return labels[LABEL_MANAGED_BY] === PRODUCT && instance ? `${obj.metadata.namespace ?? ""}/${instance}` : undefined;
}

const SERVICE_NAME = "kubernetes.io/service-name";

/** Ready endpoints of a slice: EndpointSlice readiness is nil-means-ready. */
const readyOf = (obj: Seen) =>
  ((obj["endpoints"] ?? []) as { conditions?: { ready?: boolean | null } }[]).filter(
    (e) => e.conditions?.ready !== false,
  ).length;

/** The kinds whose updates often change nothing status reads: the controllers' status writes (shared/source-events.ts, sent). */
export const DIGESTED: readonly string[] = ["Deployment", "EndpointSlice"];

const isChildKind = (kind: string): kind is ChildKind => (CHILD_KINDS as readonly string[]).includes(kind);

/**
 * @param pairName the name of the pair it is labelled as (shared/source-views.ts, pairOf)
 * @param decisions the decisions the source knows for the pair (its status's, then its DGD's),
 *   made only as far as needed: the first whose intent for this kind is the one the child's
 *   annotation names judges whether its body carries it. Whose it is, is judged apart (standIn
 *   keeps its controller).
 */
export function childView(obj: Seen, pairName: string, decisions: Iterable<Decision>): ChildView {
  const { name, resourceVersion, annotations, ownerReferences } = obj.metadata;
  const kind = obj.kind;
  const controller = ownerReferences?.find((r) => r.controller === true)?.uid;
  const applied = annotations?.[APPLIED_HASH];
  const desired = applied === undefined || !isChildKind(kind) ? undefined : intentFor(decisions, kind, name, applied);
  // Judged as its controller's: ownership is the stand-in's to tell, against the pair's UID then.
  const fits = desired === undefined ? "?" : childState(desired, obj, controller) === "current" ? "+" : "-";
  const intent =
    applied === undefined || !isChildKind(kind) ? undefined : `${short(applied).slice(0, HASH_CHARS - 1)}${fits}`;
  return { kind: intern(kind), resourceVersion, controller, intent, more: moreOf(obj, pairName) };
}

/** What only some children have, or undefined. */
function moreOf(obj: Seen, pairName: string): ChildMore | undefined {
  const { kind, metadata } = obj;
  const more: ChildMore = {};
  if (metadata.name !== childName(pairName)) more.name = metadata.name;
  if (metadata.deletionTimestamp) more.deleting = true;
  if (DIGESTED.includes(kind)) more.digest = short(statusDigest(kind, obj));
  if (kind === "Deployment") {
    const { observedGeneration, replicas, updatedReplicas, readyReplicas, availableReplicas } = (obj["status"] ??
      {}) as NonNullable<ObservedDeployment["status"]>;
    more.deployment = {
      generation: metadata.generation,
      observedGeneration,
      replicas,
      updatedReplicas,
      readyReplicas,
      availableReplicas,
    };
  }
  if (kind === "EndpointSlice") {
    const service = metadata.labels?.[SERVICE_NAME] ?? "";
    if (service !== childName(pairName)) more.service = service;
    more.ready = readyOf(obj);
  }
  return Object.keys(more).length > 0 ? more : undefined;
}

const hashOf = (obj: KubeObject) =>
  (obj.metadata as { annotations?: Record<string, string> }).annotations?.[APPLIED_HASH] ?? "";

/** The desired child of this kind and name whose applied hash is `hash`, from the first decision that renders it. */
function intentFor(decisions: Iterable<Decision>, kind: ChildKind, name: string, hash: string): KubeObject | undefined {
  for (const decision of decisions) {
    if (decision.action !== "apply") continue;
    const desired = rendered(decision, kind);
    if (desired.metadata.name === name && hashOf(desired) === hash) return desired;
  }
  return undefined;
}

/** Each decision's children, rendered once each, for as long as the decision is kept. */
const renderings = new WeakMap<Decision, Map<ChildKind, KubeObject>>();
function rendered(decision: Extract<Decision, { action: "apply" }>, kind: ChildKind): KubeObject {
  const of = renderings.get(decision) ?? new Map<ChildKind, KubeObject>();
  renderings.set(decision, of);
  const desired = of.get(kind) ?? desiredChild(decision, kind);
  of.set(kind, desired);
  return desired;
}

/** How a child's view stands to `desired`'s intent: judged against it, carrying it unjudged, or carrying another. */
export function judgedAgainst(view: ChildView, desired: KubeObject): "judged" | "unjudged" | "other" {
  const intent = view.intent;
  if (intent === undefined || intent.slice(0, -1) !== short(hashOf(desired)).slice(0, HASH_CHARS - 1)) return "other";
  return intent.endsWith("?") ? "unjudged" : "judged";
}

/**
 * A child's view made back into an object the core judges as it judged the child itself
 * (childState, controlledBy, computeStatus): `desired` itself when the child carried that intent
 * and fit it, otherwise an object that carries none; with its controller, version, deletion and
 * the counts status shows. Only for a view `judgedAgainst` desired did not call "unjudged".
 */
export function standIn(view: ChildView, desired: KubeObject | undefined): LiveObject {
  const fits = desired !== undefined && judgedAgainst(view, desired) === "judged" && view.intent!.endsWith("+");
  const d = view.more?.deployment;
  const metadata = {
    ...(fits
      ? desired.metadata
      : { name: view.more?.name, annotations: { [APPLIED_HASH]: `other:${view.intent ?? ""}` } }),
    resourceVersion: view.resourceVersion,
    ownerReferences: view.controller === undefined ? [] : [{ uid: view.controller, controller: true }],
    ...(d ? { generation: d.generation } : {}),
    ...(view.more?.deleting ? { deletionTimestamp: "deleting" } : {}),
  };
  const body = fits ? (({ metadata: _m, ...rest }) => rest)(desired) : {};
  const { generation: _g, ...counts } = d ?? {};
  return { ...body, ...(d ? { status: counts } : {}), metadata };
}

/** An EndpointSlice's view as the object status counts ready endpoints from. */
export function sliceStandIn(view: ChildView): { endpoints: { conditions: { ready: true } }[] } {
  return { endpoints: Array.from({ length: view.more?.ready ?? 0 }, () => ({ conditions: { ready: true } })) };
}

/** The EndpointSlices behind a pair's Service, among its children's views. */
export const slicesOf = (children: Iterable<ChildView>): ChildView[] =>
  [...children].filter((c) => c.kind === "EndpointSlice" && c.more?.service === undefined);

/** Whether a DynamoPoolRelay picks its DGDs by label (valid or not): its view then takes every DGD of its namespace. */
export const selects = (dpr: { spec?: unknown }): dpr is { spec: { dgdSelector: unknown } } =>
  typeof dpr.spec === "object" &&
  dpr.spec !== null &&
  (dpr.spec as { dgdSelector?: unknown }).dgdSelector !== undefined;

const selectors = new WeakMap<object, LabelSelector | null>();

/**
 * A DynamoPoolRelay's spec.dgdSelector, when it is valid (an invalid one makes its decision a
 * rejection, and selects nothing); parsed once for each spec kept.
 */
export function selectorOf(dpr: { spec?: unknown }): LabelSelector | undefined {
  if (!selects(dpr)) return undefined;
  const known = selectors.get(dpr.spec);
  if (known !== undefined) return known ?? undefined;
  const parsed = LabelSelector.safeParse(dpr.spec.dgdSelector);
  selectors.set(dpr.spec, parsed.success ? parsed.data : null);
  return parsed.success ? parsed.data : undefined;
}
