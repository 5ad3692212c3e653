/**
 * The event source's requeue: which DynamoPoolRelays it asks a reconcile for, from what it watches,
 * with no event to go by. A pair is asked for when it is not converged (shared/resync.ts,
 * unconverged: unobserved, settling, blocked) or its status does not show what its DGD makes of it
 * (shared/vouched-status.ts, changesNothing: the DGD's change, or its reconcile request, was lost
 * or lags on the way), and it has been quiet long enough (neither it, its DGD nor a child changed,
 * no event of it was delivered, none is waiting to be, and it was not asked for: a pair whose
 * events wait in a burst's backlog is not lost). A converged pair costs nothing.
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
 * Why a pair would be asked for, from what the source last saw of it and its DGD, however quiet it
 * is: undefined when it is converged and shows its DGD, which stays so until either changes.
 *
 * @param dgd the DGD as the source last saw it, undefined when there is none, "unknown" before the
 *   source's first list of DGDs
 */
export function requeueReason(dpr: ResyncCandidate & ObservedDpr, dgd: unknown, settings: DecisionSettings): RequeueReason | undefined {
  if (dpr.metadata.deletionTimestamp) return undefined;
  const reason = unconverged(dpr);
  if (reason) return reason;
  if (dgd !== "unknown" && !changesNothing(dpr, dgd, settings)) return "DGDNotShown";
  return undefined;
}

/**
 * The share of the quiet period a pair waits when the functions have not acted on what it shows:
 * a generation unobserved, or a DGD change its status does not show. Apply acts on those within
 * seconds of their event, and the ApiServerSource's one lane of DGD events lags in a burst (in a
 * 1,000-pair burst whose DGDs came after their pairs, 83 of 108 such pairs waited a quiet minute
 * for the requeue). A pair settling or blocked waits on the world (pods starting, a foreign
 * object), and the whole period.
 */
export const PROMPT_SHARE = 4;

/** Whether a pair with this reason has been quiet long enough to be asked for (`afterMs`: its backed-off period). */
export function requeueDue(reason: RequeueReason, activity: Activity, now: number, afterMs: number): boolean {
  if (activity.sending > 0) return false;
  const wait = reason === "Unobserved" || reason === "DGDNotShown" ? afterMs / PROMPT_SHARE : afterMs;
  return now - activity.since >= wait;
}
