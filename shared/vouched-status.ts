/**
 * What a DynamoPoolRelay's stored status vouches for: the children carry its decision. On that word
 * eligibility skips a DGD event that changes nothing (changesNothing), apply writes a rollout's
 * ConfigMap alone (sourcesOnly), and status takes the decision without the DGD (recordedDecision).
 */
import { ConditionType, Reason, readyReason } from "./conditions.ts";
import {
  decide,
  decideFor,
  type Decision,
  type DecisionSettings,
  type Selection,
  type VerdictReason,
} from "./decide.ts";
import { MAX_EXCLUDED_SHOWN } from "./selection.ts";
import type { ReconcileCause } from "./events.ts";
import { DynamoPoolRelay, type DynamoPoolRelayStatus } from "./api/dynamo-pool-relay.ts";

export interface ObservedDpr {
  metadata: { generation?: number };
  status?: DynamoPoolRelayStatus;
}

const conditionOf = (status: DynamoPoolRelayStatus, type: ConditionType) =>
  status.conditions?.find((c) => c.type === type);

/**
 * The stored status, when it vouches for the children: computed for the current generation from
 * children that carried its decision, with Eligible and Ready shown and nothing pending.
 */
function settledStatus(dpr: ObservedDpr): DynamoPoolRelayStatus | undefined {
  const status = dpr.status;
  if (status?.observedGeneration === undefined || status.observedGeneration !== (dpr.metadata.generation ?? 1))
    return undefined;
  const ready = conditionOf(status, ConditionType.Ready);
  if (!conditionOf(status, ConditionType.Eligible) || !ready || readyReason(ready.reason)?.vouches === false)
    return undefined;
  return status;
}

/** The Service withdrawn (or never ours) already: one still being withdrawn is not settled. */
const withdrawnAlready = (status: DynamoPoolRelayStatus) =>
  [Reason.Withdrawn, Reason.ServiceNotOwned].includes(
    conditionOf(status, ConditionType.ServicePublished)?.reason as never,
  );

/** What the stored status says the sources ConfigMap carried, and at which of its versions. */
export interface VouchedSources {
  sourcesRevision: string;
  resourceVersion: string;
}

/**
 * What a reconcile asked for by DGD changes alone may take from the stored status instead of
 * reading the children: the status vouches that they carry an apply decision for the current
 * generation whose connection revision this one keeps, and every child but the ConfigMap is
 * rendered from the DynamoPoolRelay and that revision alone (shared/render), so only the sources
 * document (a rollout's worker namespaces) can differ; it also says which version of the
 * ConfigMap carried its sources revision, so the next document can be written over that very
 * version, which fails if anyone changed it since. The payload never enters: `decision` is made
 * from the DGD just read. A reconcile for drift, a resync or a DynamoPoolRelay change reads every
 * child: those are how a child changed behind the status's back is found and put back.
 */
export function sourcesOnly(
  dpr: ObservedDpr,
  decision: Decision,
  causes: readonly ReconcileCause[],
): VouchedSources | undefined {
  if (decision.action !== "apply" || causes.length === 0 || causes.some((c) => c !== "DGDChanged")) return undefined;
  const status = settledStatus(dpr);
  // Only a status shown for an apply decision records a connection revision.
  if (status?.connectionRevision !== decision.connectionRevision) return undefined;
  const { sourcesRevision, sourcesResourceVersion } = status;
  return sourcesRevision && sourcesResourceVersion
    ? { sourcesRevision, resourceVersion: sourcesResourceVersion }
    : undefined;
}

/**
 * The decision the stored status records, made again without the DGD: when the status vouches for
 * the children, what the DGD decided is in it (the worker namespaces, or the reason the DGD was not
 * eligible). What makes a status run need no DGD (shared/read-plan.ts, shownOnly). Undefined
 * when the status does not vouch, when the DynamoPoolRelay's spec is invalid, and when this
 * DynamoPoolRelay and the operator's settings would not make the revisions the status records.
 */
export function recordedDecision(
  rawDpr: unknown,
  settings: DecisionSettings,
): Extract<Decision, { action: "apply" | "withdraw" }> | undefined {
  const parsed = DynamoPoolRelay.safeParse(rawDpr);
  if (!parsed.success) return undefined;
  const dpr = parsed.data;
  const status = settledStatus(dpr);
  if (!status) return undefined;
  // A selector's status records the selection; one without records none.
  if (!dpr.spec.dgdSelector !== (status.selectedDGDs === undefined)) return undefined;
  const selection =
    status.selectedDGDs === undefined
      ? {}
      : {
          selection: {
            selected: status.selectedDGDs,
            eligible: status.eligibleDGDs ?? 0,
            excluded: (status.excludedDGDs ?? []).map((e) => ({ ...e, reason: e.reason as VerdictReason })),
          },
        };
  const eligible = conditionOf(status, ConditionType.Eligible)!;
  if (eligible.status === "True") {
    if (!status.workerNamespaces) return undefined;
    const decision = decideFor(dpr, status.workerNamespaces, settings);
    // The sources document carries the connection revision: the same sources revision is the same connection too.
    return decision.action === "apply" && decision.sources.revision === status.sourcesRevision
      ? { ...decision, ...selection }
      : undefined;
  }
  return withdrawnAlready(status)
    ? {
        action: "withdraw",
        dpr,
        reason: eligible.reason as Extract<Decision, { action: "withdraw" }>["reason"],
        message: eligible.message,
        ...selection,
      }
    : undefined;
}

/**
 * Whether a DGD event changes nothing, decided from the DGD it carries without reading it: the
 * Dynamo operator rewrites a DGD's status on every replica change, and each rewrite is an event.
 * The payload only ever skips work: one that differs from what the status records leads to a full
 * reconcile, and a live DGD that moved on since sends the event of that move.
 *
 * @param dgd the DGD as the event carries it; undefined for a delete event (the DGD is gone)
 */
export function changesNothing(dpr: ObservedDpr, dgd: unknown, settings: DecisionSettings): boolean {
  return showsDecision(dpr, () => decide(dpr, dgd, settings));
}

/** Whether the stored status shows this decision already (`decision` is made only when the status vouches). */
export function showsDecision(dpr: ObservedDpr, decision: () => Decision): boolean {
  const status = settledStatus(dpr);
  if (!status) return false;
  const eligible = conditionOf(status, ConditionType.Eligible)!;
  const made = decision();
  if (made.action !== "reject" && !showsSelection(status, made.selection)) return false;
  switch (made.action) {
    case "apply":
      return (
        eligible.status === "True" &&
        status.sourcesRevision === made.sources.revision &&
        status.connectionRevision === made.connectionRevision
      );
    case "withdraw":
      return eligible.status === "False" && eligible.reason === made.reason && withdrawnAlready(status);
    case "reject":
      return false;
  }
}

/**
 * Whether the status shows a selector's selection as the decision makes it: its counts and the DGDs
 * left out (as many as it lists). A same-name decision has none, and its status shows none.
 */
function showsSelection(status: DynamoPoolRelayStatus, selection: Selection | undefined): boolean {
  if (!selection) return status.selectedDGDs === undefined;
  const shown = (status.excludedDGDs ?? []).map((e) => `${e.name}/${e.reason}`);
  const made = selection.excluded.slice(0, MAX_EXCLUDED_SHOWN).map((e) => `${e.name}/${e.reason}`);
  return (
    status.selectedDGDs === selection.selected &&
    status.eligibleDGDs === selection.eligible &&
    shown.join(" ") === made.join(" ")
  );
}
