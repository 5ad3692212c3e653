/**
 * Whether a DynamoGraphDeployment event can change nothing for its DynamoPoolRelay, decided
 * without reading the DGD: the decision made from the DGD the event carries is the one the status
 * says the children already carry, for the DynamoPoolRelay's current generation. The Dynamo
 * operator rewrites a DGD's status on every replica or condition change; each rewrite is an
 * update event, and this is what lets eligibility answer it with its one read.
 *
 * The payload only ever skips work, never writes: a payload that differs from what the status
 * records (stale, or newer) leads to a full reconcile, which reads the truth. A payload that
 * matches while the live DGD has moved on is followed by the event of that move.
 */
import { ConditionType, Reason } from "./conditions.ts";
import { decide, type DecisionSettings } from "./decide.ts";
import type { DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";

export interface ObservedDpr {
  metadata: { generation?: number };
  status?: DynamoPoolRelayStatus;
}

/** Ready reasons that say the children do not carry the decision (yet), or cannot. */
const UNSETTLED: readonly string[] = [Reason.Reconciling, Reason.ApplyFailed, Reason.ForeignChild];

/**
 * @param dgd the DGD as the event carries it; undefined for a delete event (the DGD is gone)
 */
export function changesNothing(dpr: ObservedDpr, dgd: unknown, settings: DecisionSettings): boolean {
  const status = dpr.status;
  if (status?.observedGeneration === undefined || status.observedGeneration !== (dpr.metadata.generation ?? 1)) return false;
  const condition = (type: ConditionType) => status.conditions?.find((c) => c.type === type);
  const eligible = condition(ConditionType.Eligible);
  const ready = condition(ConditionType.Ready);
  if (!eligible || !ready || UNSETTLED.includes(ready.reason)) return false;
  const decision = decide(dpr, dgd, settings);
  switch (decision.action) {
    case "apply":
      return eligible.status === "True" && status.sourcesRevision === decision.sources.revision && status.connectionRevision === decision.connectionRevision;
    case "withdraw":
      // Withdrawn (or never ours) already: a Service still being withdrawn is not settled.
      return eligible.status === "False" && eligible.reason === decision.reason &&
        [Reason.Withdrawn, Reason.ServiceNotOwned].includes(condition(ConditionType.ServicePublished)?.reason as never);
    case "reject":
      return false;
  }
}
