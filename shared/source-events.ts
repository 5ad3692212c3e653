/**
 * What the product's own event source (functions/source) sends: the change events Knative's
 * ApiServerSource sends in Resource mode, so the Triggers and functions take both alike; which
 * changes it leaves unsent; and what changed while it had no watch running.
 */
import type { CloudEvent } from "./cloudevent.ts";
import { SourceEventType, derivedId } from "./events.ts";
import { neverWritten, observedInEvent, type ResyncCandidate } from "./resync.ts";
import { statusDigest } from "./seen-versions.ts";
import { DIGESTED, HASH_CHARS } from "./source-views.ts";

export type Change = "add" | "update" | "delete";

const CHANGE_TYPES: Record<Change, string> = {
  add: SourceEventType.Add,
  update: SourceEventType.Update,
  delete: SourceEventType.Delete,
};

export interface Watched {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/**
 * Adds no Trigger delivers (knative/triggers.yaml, poolrelay-status): apply makes these children
 * and shows or reports what it made. Left unsent at the source, they cost no delivery at all.
 */
export const UNSENT_ADDS: readonly string[] = ["ConfigMap", "Deployment", "Service"];

/** What `sent` compares of the version seen before: the digest of a kind in DIGESTED, the generation of a DynamoPoolRelay. */
export interface SentFacts {
  digest?: string | undefined;
  metadata?: { generation?: number | undefined };
}

/** The facts `sent` compares, of an object at hand (a view keeps them too). */
export function sentFacts(obj: Watched & { metadata: { generation?: number } }): SentFacts {
  return {
    metadata: { generation: obj.metadata.generation },
    ...(DIGESTED.includes(obj.kind) ? { digest: statusDigest(obj.kind, obj as never).slice(0, HASH_CHARS) } : {}),
  };
}

/** The kinds whose changes the source sends: the DynamoPoolRelays', and the children's status takes (knative/triggers.yaml). */
export const SENT_KINDS: readonly string[] = ["DynamoPoolRelay", "ConfigMap", "Deployment", "Service", "EndpointSlice"];

/**
 * Whether the source sends a change. Only of SENT_KINDS: the ServiceAccount, Role and RoleBinding
 * are watched for the requeue's judgment alone (a change of one that nobody asked for is repaired by
 * it). Adds of UNSENT_ADDS are not sent, nor an update of a Deployment or an EndpointSlice that
 * changes nothing status reads of it (shared/seen-versions.ts, statusDigest: the Deployment
 * controller's conditions and observedGeneration, an EndpointSlice's endpoints not yet ready) since
 * the version the source saw before, whose change was sent then or was itself one such. Of the
 * DynamoPoolRelay's, only those apply acts on: an add or an update to a generation the status has
 * not observed (shared/resync.ts, observedInEvent) that differs from the one of the version the
 * source saw before (whose event was sent then). Not its delete (the garbage collector removes the
 * children), nor the updates of its status or metadata alone: the product's own status writes,
 * several per publish, each of which apply would answer with nothing or a read that finds it
 * observed.
 *
 * @param previous what the source kept of the object as it last saw it, if it did
 */
export function sent(
  change: Change,
  obj: Watched & { metadata: { generation?: number } },
  previous?: SentFacts,
): boolean {
  if (!SENT_KINDS.includes(obj.kind)) return false;
  if (obj.kind !== "DynamoPoolRelay") {
    if (change === "add") return !UNSENT_ADDS.includes(obj.kind);
    if (change === "delete" || previous?.digest === undefined || !DIGESTED.includes(obj.kind)) return true;
    return previous.digest !== statusDigest(obj.kind, obj as never).slice(0, HASH_CHARS);
  }
  if (change === "delete" || observedInEvent(obj, false)) return false;
  return change === "add" || previous === undefined || previous.metadata?.generation !== obj.metadata.generation;
}

/**
 * How long a sent change waits before it may leave (functions/source/send-queue.ts, a debounce): a
 * child's update `batchMs`, so that a burst of them (a Deployment's status as each Relay pod becomes
 * ready) leaves as one event; adds, deletes and a DynamoPoolRelay's changes at once (an
 * EndpointSlice's add, empty, costs status no read).
 */
export function holdMs(change: Change, kind: string, batchMs: number): number {
  return kind === "DynamoPoolRelay" || change !== "update" ? 0 : batchMs;
}

export function objectKey(obj: Watched): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
}

/**
 * The children whose changes only status takes, sent under their pair's one queue key: every
 * status run reads the Deployment and the EndpointSlices alike, so one event wakes it for both. In
 * a burst a Relay's EndpointSlice is born with its pods Ready, and its add and the Deployment's
 * update, sent apart, woke two status runs that raced for one status write.
 */
const PAIR_KEYED: readonly string[] = ["Deployment", "EndpointSlice"];

/** The extension naming the objects whose changes an event also stands for: `Kind/name@resourceVersion`, space-separated. */
export const COVERS = "covers";

/** The send queue's key of a change: its pair's for the kinds of PAIR_KEYED, otherwise its object's. */
export function queueKey(kind: string, obj: Watched, pair: string): string {
  return PAIR_KEYED.includes(kind) ? `children/${pair}` : `${kind}/${objectKey(obj)}`;
}

/**
 * Whether its children's changes wait in the source until a pair's first status is written: until
 * then apply's first run is under way and shows what its writes make, and status answers such a
 * change with nothing (`AwaitsApply`), so sent at once it would be lost for Ready. Held back, it
 * leaves when the status appears, and status shows what it brought. Not when the source knows no
 * such pair (status then finds it gone).
 *
 * @param dpr the DynamoPoolRelay as the source last saw it
 */
export function awaitsFirstStatus(dpr: ResyncCandidate | undefined): boolean {
  return dpr !== undefined && !dpr.metadata.deletionTimestamp && neverWritten(dpr);
}

/** The queue key of a pair's requeue (functions/source/main.ts). */
export const requeueKey = (pair: string): string => `requeue/${pair}`;

/**
 * The send queue's lane of a key: a pair's own events (its DynamoPoolRelay's, its requeue), whose
 * delivery lasts apply's whole run, or its children's, which wake status. In a 1,000-pair burst with
 * one lane the children's events waited behind the DynamoPoolRelays' adds: the median Ready came
 * 140 s after the median publish.
 */
export function laneOf(queueKey: string): "pairs" | "children" {
  return queueKey.startsWith("DynamoPoolRelay/") || queueKey.startsWith("requeue/") ? "pairs" : "children";
}

const objectOfEvent = (e: CloudEvent) =>
  `${String(e.extensions["kind"])}/${((e.data ?? {}) as Partial<Watched>).metadata?.name ?? ""}`;
const entryOf = (e: CloudEvent) =>
  `${objectOfEvent(e)}@${((e.data ?? {}) as Partial<Watched>).metadata?.resourceVersion ?? ""}`;
const objectOf = (entry: string) => (entry.includes("@") ? entry.slice(0, entry.lastIndexOf("@")) : entry);
const isAdd = (e: CloudEvent) => e.type === SourceEventType.Add;

/** The entries of an event's COVERS extension. */
export function coversOf(e: Pick<CloudEvent, "extensions">): string[] {
  const covers = e.extensions[COVERS];
  return typeof covers === "string" && covers !== "" ? covers.split(" ") : [];
}

/** The objects an event's COVERS extension names, each entry read as `Kind/name@resourceVersion`. */
export function coveredObjects(
  e: Pick<CloudEvent, "extensions">,
): { kind: string; name: string; resourceVersion: string }[] {
  return coversOf(e).map((entry) => {
    const [object, at] = [objectOf(entry), entry.lastIndexOf("@")];
    const slash = object.indexOf("/");
    return {
      kind: object.slice(0, Math.max(slash, 0)),
      name: object.slice(slash + 1),
      resourceVersion: at < 0 ? "" : entry.slice(at + 1),
    };
  });
}

/**
 * The one event a queue key sends for two changes, `pending` not sent yet and `next` after it. Of
 * one object: the newer, still an add if the first was (its receiver never saw the object). Of two:
 * the newer, unless only the pending one is an add (an add is never hidden: status answers one
 * with no ready endpoint without a read), naming the other's object, and those the two named
 * before, in COVERS (the newest version of each), so status reads for their kinds too and a tap
 * can account for them. Its id is derived from what it carries and covers: another event than either.
 */
export function merged(pending: CloudEvent, next: CloudEvent): CloudEvent {
  const same = objectOfEvent(pending) === objectOfEvent(next);
  const kept = same || !isAdd(pending) || isAdd(next) ? next : pending;
  const other = kept === next ? pending : next;
  const entries = [
    ...coversOf(pending),
    ...(kept === next ? [entryOf(pending)] : []),
    ...coversOf(next),
    ...(kept === next ? [] : [entryOf(next)]),
  ];
  const covered = new Map(entries.map((entry) => [objectOf(entry), entry]));
  covered.delete(objectOfEvent(kept));
  const { [COVERS]: _, ...extensions } = kept.extensions;
  const stillAdd = same && isAdd(pending) && next.type === SourceEventType.Update;
  const base = stillAdd
    ? { ...kept, type: SourceEventType.Add, id: derivedId(kept.source, "add", other.id, kept.id) }
    : kept;
  if (covered.size === 0) return { ...base, extensions };
  const covers = [...covered.values()].join(" ");
  return { ...base, id: derivedId(base.id, covers), extensions: { ...extensions, [COVERS]: covers } };
}

/**
 * The event of one change, as the ApiServerSource makes it (`pkg/adapter/apiserver/events`): the
 * object as data and `kind`, `apiversion`, `name`, `namespace` as extensions. The id is derived
 * from the object's version, so the same change seen twice (a watch replayed after a relist) is
 * the same event.
 */
export function changeEvent(
  change: Change,
  obj: Watched,
  ctx: { source: string; plural: string; time: string },
): CloudEvent {
  const namespace = obj.metadata.namespace ?? "";
  return {
    specversion: "1.0",
    id: derivedId(ctx.source, change, obj.metadata.uid ?? "", obj.metadata.resourceVersion ?? ""),
    type: CHANGE_TYPES[change],
    source: ctx.source,
    subject: `/apis/${obj.apiVersion}/namespaces/${namespace}/${ctx.plural}/${obj.metadata.name}`,
    time: ctx.time,
    datacontenttype: "application/json",
    extensions: { kind: obj.kind, apiversion: obj.apiVersion, name: obj.metadata.name, namespace },
    data: obj,
  };
}
