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
