/**
 * The event source's requeue: which DynamoPoolRelays it asks a reconcile for, from what it watches,
 * with no event to go by. A pair is asked for when it has been quiet (neither it nor its DGD
 * changed, nor was it asked for) for `afterMs` and either it is not converged (shared/resync.ts,
 * unconverged: unobserved, settling, blocked) or its status does not show what its DGD makes of it
 * (shared/vouched-status.ts, changesNothing: the DGD's change, or its reconcile request, was lost
 * on the way). A converged pair costs nothing.
 */
import type { DecisionSettings } from "./decide.ts";
import { unconverged, type ResyncCandidate } from "./resync.ts";
import { changesNothing, type ObservedDpr } from "./vouched-status.ts";

export type RequeueReason = "Unobserved" | "Blocked" | "Settling" | "DGDNotShown";

/** The longest a pair asked for again and again without changing waits between two requests. */
export const MAX_REQUEUE_MS = 600_000;

/**
 * How long a pair must be quiet before the next request: `afterMs` for the first, then twice as
 * long after each request that changed nothing (a workqueue's per-item backoff), up to
 * MAX_REQUEUE_MS, the resync's period: a burst that keeps pairs settling for minutes is not made
 * heavier by a request a minute for each. Any change of the pair starts it over.
 *
 * @param asked requests since the pair last changed
 */
export function requeueAfterMs(afterMs: number, asked: number): number {
  return Math.min(afterMs * 2 ** Math.min(asked, 16), Math.max(afterMs, MAX_REQUEUE_MS));
}

/**
 * @param dgd the DGD as the source last saw it, undefined when there is none, "unknown" before the
 *   source's first list of DGDs
 * @param since when the pair or its DGD last changed, or the pair was last asked for (ms)
 */
export function requeueReason(
  dpr: ResyncCandidate & ObservedDpr,
  dgd: unknown,
  since: number,
  now: number,
  afterMs: number,
  settings: DecisionSettings,
): RequeueReason | undefined {
  if (dpr.metadata.deletionTimestamp || now - since < afterMs) return undefined;
  const reason = unconverged(dpr);
  if (reason) return reason;
  if (dgd !== "unknown" && !changesNothing(dpr, dgd, settings)) return "DGDNotShown";
  return undefined;
}
