/**
 * The event source's requeue: which DynamoPoolRelays it asks a reconcile for, from what it watches,
 * with no event to go by. A pair is asked for when it has been quiet for `afterMs` (neither it, its
 * DGD nor a child changed, no event of it was delivered, none is waiting to be, and it was not asked
 * for: a pair whose events wait in a burst's backlog is not lost) and either it is not converged (shared/resync.ts,
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

/** What the source has seen a pair do lately. */
export interface Activity {
  /** When the pair, its DGD or one of its children last changed, an event of it was last delivered, or it was last asked for (ms). */
  since: number;
  /** Its events queued or being sent: until they are delivered, the functions have not seen what they bring. */
  sending: number;
}

/**
 * @param dgd the DGD as the source last saw it, undefined when there is none, "unknown" before the
 *   source's first list of DGDs
 */
export function requeueReason(
  dpr: ResyncCandidate & ObservedDpr,
  dgd: unknown,
  activity: Activity,
  now: number,
  afterMs: number,
  settings: DecisionSettings,
): RequeueReason | undefined {
  if (dpr.metadata.deletionTimestamp || activity.sending > 0 || now - activity.since < afterMs) return undefined;
  const reason = unconverged(dpr);
  if (reason) return reason;
  if (dgd !== "unknown" && !changesNothing(dpr, dgd, settings)) return "DGDNotShown";
  return undefined;
}
