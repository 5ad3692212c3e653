/**
 * The event contract: every type the product consumes or emits, its data schema, and builders for
 * the product's own events. Builders take id and time as parameters; the shell supplies them.
 */
import { createHash } from "node:crypto";
import type { CloudEvent, Parsed } from "./cloudevent.ts";
import { REJECTED_REASONS } from "./conditions.ts";
import { formatIssues } from "./issues.ts";
import {
  DNS1123_LABEL,
  DNS1123_SUBDOMAIN,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
  MAX_DGD_NAME_LENGTH,
  PRODUCT,
  canPair,
} from "./names.ts";
import * as z from "./zod.ts";

/** Types the product emits: reverse-DNS, versioned. */
export const EventType = {
  Reconcile: "com.nvidia.dynamo.poolrelay.reconcile.v1",
  Applied: "com.nvidia.dynamo.poolrelay.applied.v1",
  Withdrawn: "com.nvidia.dynamo.poolrelay.withdrawn.v1",
  Rejected: "com.nvidia.dynamo.poolrelay.rejected.v1",
} as const;

/** Types the product consumes from Knative sources. */
export const SourceEventType = {
  Add: "dev.knative.apiserver.resource.add",
  Update: "dev.knative.apiserver.resource.update",
  Delete: "dev.knative.apiserver.resource.delete",
  Ping: "dev.knative.sources.ping",
} as const;

export const APISERVER_TYPES: readonly string[] = [SourceEventType.Add, SourceEventType.Update, SourceEventType.Delete];

// Keys are checked as the API server checks names, before any request: a hostile key (`..`, `a/b`)
// must never become a path the API server would read differently.
const NAMESPACE_RULE = "must be a namespace name (a DNS-1123 label of at most 63 characters)";
const OBJECT_RULE = "must be an object name (a DNS-1123 subdomain of at most 253 characters)";
const namespaceName = z.string().check(z.maxLength(63, NAMESPACE_RULE), z.regex(DNS1123_LABEL, NAMESPACE_RULE));
const objectName = z.string().check(z.maxLength(253, OBJECT_RULE), z.regex(DNS1123_SUBDOMAIN, OBJECT_RULE));
const dprName = z
  .string()
  .check(
    z.refine(canPair, `must be a DynamoPoolRelay name (a DNS-1035 label of at most ${MAX_DGD_NAME_LENGTH} characters)`),
  );

/** Identifies one DynamoPoolRelay. */
export const DprKey = z.object({ namespace: namespaceName, name: dprName });
export type DprKey = z.infer<typeof DprKey>;

export const ReconcileCause = z.enum(["DGDChanged", "DPRChanged", "Resync", "Drift", "Requeue", "DeadLettered"]);
export type ReconcileCause = z.infer<typeof ReconcileCause>;

export const ReconcileData = z.extend(DprKey, {
  cause: ReconcileCause,
});
export type ReconcileData = z.infer<typeof ReconcileData>;

const Outcome = z.extend(DprKey, {
  uid: z.string().check(z.minLength(1)),
  generation: z.int().check(z.minimum(1)),
});

export const AppliedData = z.extend(Outcome, {
  applied: z.array(z.string()),
  unchanged: z.array(z.string()),
  skipped: z.array(z.object({ kind: z.string(), reason: z.string() })),
  /** Apply wrote the status these children make, over the version it read first: no status run is needed for it. */
  statusWritten: z.optional(z.literal(true)),
});
export type AppliedData = z.infer<typeof AppliedData>;

export const WithdrawnData = z.extend(Outcome, {
  reason: z.string(),
  message: z.string(),
  service: z.enum(["deleted", "absent", "notOwned"]),
  /** As in applied.v1: apply wrote the status of the withdrawal itself. */
  statusWritten: z.optional(z.literal(true)),
});
export type WithdrawnData = z.infer<typeof WithdrawnData>;

/** InvalidSpec: the core rejected the spec. ApplyFailed: the API server refused a child (e.g. an invalid toleration). */
export const RejectedData = z.extend(Outcome, { reason: z.enum(REJECTED_REASONS), message: z.string() });
export type RejectedData = z.infer<typeof RejectedData>;

/** The object an ApiServerSource (Resource mode) sends: only its identity is used, as a hint. */
export const ApiServerObject = z.looseObject({
  apiVersion: z.string().check(z.minLength(1)),
  kind: z.string().check(z.minLength(1)),
  metadata: z.looseObject({
    name: objectName,
    namespace: namespaceName,
    labels: z.optional(z.record(z.string(), z.string())),
  }),
});

export const DATA_SCHEMAS = {
  [EventType.Reconcile]: ReconcileData,
  [EventType.Applied]: AppliedData,
  [EventType.Withdrawn]: WithdrawnData,
  [EventType.Rejected]: RejectedData,
} as const;

export function parseData<T>(event: CloudEvent, schema: z.ZodMiniType<T>): Parsed<T> {
  const r = schema.safeParse(event.data);
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, error: formatIssues(r.error, `the data of ${event.type} event ${event.id}`) };
}

/**
 * Deterministic ids: a redelivered event produces the same reply id, so duplicates stay
 * recognisable downstream (CloudEvents de-duplicate on source + id).
 */
export function derivedId(...parts: string[]): string {
  const h = createHash("sha256").update(parts.join("\u0000")).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export interface EmitContext {
  /** The emitting function's CloudEvents source, e.g. `/dynamo-pool-relay/apply`. */
  source: string;
  /** Id of the event this one answers, or another stable seed. */
  cause: string;
  time: string;
}

/**
 * The extension on a report whose data says `statusWritten`: apply showed what its writes make, so
 * status has nothing left to do, and its Trigger, which sees attributes but not data, does not
 * deliver it (knative/triggers.yaml): no invocation, no cold start.
 */
export const STATUS_WRITTEN = "statuswritten";

export function productEvent<T extends keyof typeof DATA_SCHEMAS>(
  type: T,
  data: z.infer<(typeof DATA_SCHEMAS)[T]>,
  ctx: EmitContext,
): CloudEvent {
  const key = data as DprKey;
  const shown = (data as { statusWritten?: true }).statusWritten === true;
  return {
    specversion: "1.0",
    id: derivedId(ctx.source, ctx.cause, type, key.namespace, key.name),
    type,
    source: ctx.source,
    subject: keyString(key),
    time: ctx.time,
    datacontenttype: "application/json",
    extensions: shown ? { [STATUS_WRITTEN]: "true" } : {},
    data,
  };
}

/** A DynamoPoolRelay's key as one string, `<namespace>/<name>`. */
export const keyString = (key: DprKey): string => `${key.namespace}/${key.name}`;

/**
 * The DynamoPoolRelay a child's ApiServerSource event is about: children (and the EndpointSlices
 * that inherit the Service's labels) carry the product's labels with the DGD name as instance.
 */
export function childOwnerKey(obj: z.infer<typeof ApiServerObject>): DprKey | undefined {
  const labels = obj.metadata.labels ?? {};
  const instance = labels[LABEL_INSTANCE];
  if (labels[LABEL_MANAGED_BY] !== PRODUCT || !instance || !canPair(instance)) return undefined;
  return { namespace: obj.metadata.namespace, name: instance };
}
