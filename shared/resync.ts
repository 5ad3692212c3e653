/**
 * Which DynamoPoolRelays need a reconcile: on a change event, one whose generation is not yet
 * observed; on a resync tick, also those whose Ready waits on events that may never come, and one
 * slice of all objects by key, so each is fully reconciled every `slots` ticks with nothing recorded.
 */
import { createHash } from "node:crypto";
import { ResyncColumn } from "./api/columns.ts";
import { ConditionType, Reason, readyReason } from "./conditions.ts";
import { keyString, type DprKey } from "./events.ts";

export interface ResyncCandidate {
  metadata: { namespace?: string; name: string; generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number; conditions?: { type: string; status?: string; reason?: string }[] };
}

/** A page of a LIST answered as a Table with no objects (shared/kube/client.ts, listTablePages). */
export interface TablePage {
  kind?: string;
  columnDefinitions?: readonly { name: string }[];
  rows?: readonly { cells?: readonly unknown[] }[];
}

// Pure: a bundle without candidatesOf (apply's) leaves the names out.
const RESYNC_COLUMNS: readonly string[] = /* @__PURE__ */ Object.values(ResyncColumn);

const text = (cell: unknown) => (typeof cell === "string" ? cell : undefined);
const count = (cell: unknown) => (Number.isSafeInteger(cell) ? (cell as number) : undefined);

/**
 * The resync candidates of one Table page, from the cells of the printer columns the CRD declares
 * for the resync (shared/api/columns.ts): what the API server found at each column's JSONPath, or
 * null where nothing is. The Table carries no deletionTimestamp, so an object being deleted is a
 * candidate as any other: a request for it ends at apply's first reads (`Gone`). A page with rows
 * but without those columns comes from a CRD older than this function, which cannot decide; an
 * answer that is not a Table at all (a proxy that ignored the Accept header) would read as empty
 * and silently switch the resync off, so it is refused too.
 */
export function candidatesOf(table: TablePage): ResyncCandidate[] {
  if (table.kind !== "Table")
    throw new Error(
      `the DynamoPoolRelay LIST was answered with ${JSON.stringify(table.kind)}, not a meta.k8s.io/v1 Table`,
    );
  const rows = table.rows ?? [];
  if (rows.length === 0) return [];
  const names = (table.columnDefinitions ?? []).map((c) => c.name);
  const missing = RESYNC_COLUMNS.filter((n) => !names.includes(n));
  if (missing.length > 0) {
    throw new Error(
      `the installed DynamoPoolRelay CRD has no printer column ${missing.join(", ")}, which the resync lists: apply the CRD of this release (crds/)`,
    );
  }
  return rows.map((row, i) => {
    const cell = (column: string) => row.cells?.[names.indexOf(column)];
    const [namespace, name] = [text(cell(ResyncColumn.Namespace)), text(cell(ResyncColumn.Name))];
    if (!namespace || !name)
      throw new Error(`row ${i} of the DynamoPoolRelay Table has no namespace or name: ${JSON.stringify(row.cells)}`);
    const generation = count(cell(ResyncColumn.Generation));
    const observedGeneration = count(cell(ResyncColumn.Observed));
    const [ready, reason] = [text(cell(ResyncColumn.Ready)), text(cell(ResyncColumn.Reason))];
    const conditions =
      ready !== undefined || reason !== undefined
        ? [
            {
              type: ConditionType.Ready,
              ...(ready !== undefined ? { status: ready } : {}),
              ...(reason !== undefined ? { reason } : {}),
            },
          ]
        : undefined;
    return {
      metadata: { namespace, name, ...(generation !== undefined ? { generation } : {}) },
      status: {
        ...(observedGeneration !== undefined ? { observedGeneration } : {}),
        ...(conditions ? { conditions } : {}),
      },
    };
  });
}

export type ResyncReason = "Unobserved" | "Blocked" | "Settling" | "Periodic";

export interface ResyncDue {
  key: DprKey;
  reason: ResyncReason;
}

export function tickOf(time: string, periodSeconds: number): number {
  return Math.floor(Date.parse(time) / (periodSeconds * 1000));
}

/** The periodic slot of a key (`namespace/name`): the same on every tick, spread evenly. */
export function slotOf(key: string, slots: number): number {
  return parseInt(createHash("sha256").update(key).digest("hex").slice(0, 8), 16) % slots;
}

const keyOf = (dpr: ResyncCandidate): DprKey => ({ namespace: dpr.metadata.namespace ?? "", name: dpr.metadata.name });
const readyOf = (dpr: ResyncCandidate) => dpr.status?.conditions?.find((c) => c.type === ConditionType.Ready);

/** A live DynamoPoolRelay whose current generation the status does not yet reflect. */
export function unobserved(dpr: ResyncCandidate): boolean {
  if (dpr.metadata.deletionTimestamp) return false;
  return dpr.status?.observedGeneration === undefined || dpr.status.observedGeneration < (dpr.metadata.generation ?? 0);
}

/**
 * Whether the product never wrote the status: no observed generation and no condition. Apply's
 * first run writes it; a child's change before then is apply's to show (status answers
 * `AwaitsApply`, and the event source holds such changes back until the status is written).
 */
export function neverWritten(dpr: ResyncCandidate): boolean {
  return dpr.status?.observedGeneration === undefined && (dpr.status?.conditions ?? []).length === 0;
}

/**
 * Whether a reconcile asked for only because a live DynamoPoolRelay changed (its change event,
 * taken unread) came late or twice: its generation is observed, so a run that read every child found
 * them carrying its decision. Not for a spec the core rejects: status runs observe that too, but
 * only apply's run reports it as a Kubernetes Event.
 */
export function changeObserved(dpr: ResyncCandidate): boolean {
  if (unobserved(dpr)) return false;
  return readyOf(dpr)?.reason !== Reason.InvalidSpec;
}

/**
 * Whether a DynamoPoolRelay change event needs nothing: a delete (the garbage collector removes the
 * children), or an object whose generation the status already reflects (the product's own status
 * writes, a label edit). Only ever a reason to skip: a payload that is not plainly observed leads
 * to a reconcile request, whose run reads the live object, and it decides (changeObserved). A
 * payload that is observed while the live object has moved on to a new generation is followed by
 * the event of that move; the resync covers a lost one.
 *
 * @param observed the object the event carries; undefined for a delete event
 */
export function observedInEvent(observed: unknown, deleted: boolean): boolean {
  if (deleted) return true;
  const { metadata, status } = (observed ?? {}) as {
    metadata?: { generation?: unknown; deletionTimestamp?: unknown };
    status?: { observedGeneration?: unknown };
  };
  if (typeof metadata?.deletionTimestamp === "string") return true;
  const generation = metadata?.generation;
  const seen = status?.observedGeneration;
  return Number.isSafeInteger(generation) && Number.isSafeInteger(seen) && (seen as number) >= (generation as number);
}

/**
 * Why a DynamoPoolRelay is due on this tick. Blocked by a foreign child, every tick: its removal
 * sends no event. Settling, every tick too: the events that end the wait (the pods becoming
 * available, the EndpointSlices, the Service) are what the sources lose under load, and while the
 * status is right the reconcile ends in apply's reads.
 */
export function resyncReason(dpr: ResyncCandidate, tick: number, slots: number): ResyncReason | undefined {
  const reason = unconverged(dpr);
  if (reason) return reason;
  if (slotOf(keyString(keyOf(dpr)), slots) === tick % slots) return "Periodic";
  return undefined;
}

/** Why a DynamoPoolRelay is not converged: its generation unobserved, or its Ready waiting (blocked or settling). */
export function unconverged(dpr: ResyncCandidate): Exclude<ResyncReason, "Periodic"> | undefined {
  if (unobserved(dpr)) return "Unobserved";
  const ready = readyOf(dpr);
  // Reasons that events may never end are retried every tick (shared/conditions.ts, READY_REASONS).
  const wait = readyReason(ready?.reason)?.resync;
  if (wait === "Blocked") return "Blocked";
  if (wait === "Settling" && ready?.status === "False") return "Settling";
  return undefined;
}

/** The DynamoPoolRelays of one listed page that need a reconcile on this tick. */
export function dueOnTick(page: readonly ResyncCandidate[], tick: number, slots: number): ResyncDue[] {
  return page.flatMap((dpr) => {
    const reason = resyncReason(dpr, tick, slots);
    return reason ? [{ key: keyOf(dpr), reason }] : [];
  });
}

/**
 * The seed of a resync request's id. The tick, not the ping event's id: every run of one tick (a
 * redelivery, a re-run while the first still emits, a second ping for the same period) emits the
 * same ids, so the duplicates stay recognisable; the next tick's requests are new events.
 */
export function resyncCause(tick: number): string {
  return `resync-tick-${tick}`;
}
