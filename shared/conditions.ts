/**
 * The status vocabulary of a DynamoPoolRelay: condition types and CamelCase reasons, declared once.
 */

export const ConditionType = {
  Ready: "Ready",
  Eligible: "Eligible",
  ServicePublished: "ServicePublished",
  ListenerAvailable: "ListenerAvailable",
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Conditions in the order status lists them. */
export const CONDITION_ORDER: readonly ConditionType[] = [
  ConditionType.Ready,
  ConditionType.Eligible,
  ConditionType.ServicePublished,
  ConditionType.ListenerAvailable,
];

export const Reason = {
  // Eligible
  Eligible: "Eligible",
  InvalidServiceName: "InvalidServiceName",
  DGDNotFound: "DGDNotFound",
  DGDDeleting: "DGDDeleting",
  UnknownDiscoveryBackend: "UnknownDiscoveryBackend",
  DiscoveryBackendNotKubernetes: "DiscoveryBackendNotKubernetes",
  UnknownDiscoveryMode: "UnknownDiscoveryMode",
  DiscoveryModeNotPod: "DiscoveryModeNotPod",
  SourcesLimitExceeded: "SourcesLimitExceeded",
  InvalidDGD: "InvalidDGD",
  NoDGDSelected: "NoDGDSelected",
  NoEligibleDGD: "NoEligibleDGD",
  InvalidSpec: "InvalidSpec",
  // ServicePublished
  Published: "Published",
  ServiceNotFound: "ServiceNotFound",
  ServiceNotOwned: "ServiceNotOwned",
  Withdrawn: "Withdrawn",
  Withdrawing: "Withdrawing",
  // ListenerAvailable
  EndpointsReady: "EndpointsReady",
  NoReadyEndpoints: "NoReadyEndpoints",
  // Ready
  Ready: "Ready",
  NotEligible: "NotEligible",
  ServiceNotPublished: "ServiceNotPublished",
  ListenerUnavailable: "ListenerUnavailable",
  RolloutPending: "RolloutPending",
  Reconciling: "Reconciling",
  ApplyFailed: "ApplyFailed",
  ForeignChild: "ForeignChild",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * What a Ready reason means to the product's rules. Each rule asks this table, never a list of its
 * own, so a new reason is placed once.
 */
export interface ReadyReasonRule {
  /**
   * A stored status with this reason vouches that the children carry its decision, so a run may
   * take that decision from it instead of reading them (shared/vouched-status.ts). Not while the
   * children do not carry it yet, cannot (refused), or someone else's child blocks them.
   */
  vouches: boolean;
  /**
   * Why the resync reconciles it on every tick, not once a sweep (shared/resync.ts): `Settling`
   * waits on the children's own events, which the sources lose under load; `Blocked` waits on a
   * foreign child's removal, which sends no event at all.
   */
  resync?: "Settling" | "Blocked";
  /**
   * Whether the status shows a replica of the current Deployment template available
   * (shared/status.ts, rolledOut): from `RolloutPending` on in readiness order, yes or no; before
   * it, either. Undefined: a status with this reason is not compared with a Deployment event
   * (shared/read-plan.ts, deploymentShown).
   */
  rolledOut?: boolean | "either";
  /** Apply reports it to status in a rejected.v1 event, with a Warning Event (shared/events.ts, RejectedData). */
  rejected?: true;
}

/**
 * Every reason the Ready condition is written with, in the order readiness finds them (a spec the
 * core rejects first, then the first thing a user would fix; shared/status.ts, readiness).
 */
export const READY_REASONS = {
  [Reason.InvalidSpec]: { vouches: true, rejected: true },
  [Reason.NotEligible]: { vouches: true, rolledOut: "either" },
  [Reason.ForeignChild]: { vouches: false, resync: "Blocked" },
  [Reason.ApplyFailed]: { vouches: false, rejected: true },
  [Reason.Reconciling]: { vouches: false, resync: "Settling" },
  [Reason.ServiceNotPublished]: { vouches: true, resync: "Settling", rolledOut: "either" },
  [Reason.RolloutPending]: { vouches: true, resync: "Settling", rolledOut: false },
  [Reason.ListenerUnavailable]: { vouches: true, resync: "Settling", rolledOut: true },
  [Reason.Ready]: { vouches: true, rolledOut: true },
} as const satisfies Record<string, ReadyReasonRule>;
export type ReadyReason = keyof typeof READY_REASONS;

/** The rule of a stored Ready reason; undefined for one this product does not write. */
export function readyReason(reason: string | undefined): ReadyReasonRule | undefined {
  return reason !== undefined && Object.hasOwn(READY_REASONS, reason)
    ? READY_REASONS[reason as ReadyReason]
    : undefined;
}

/** The Ready reasons apply reports in a rejected.v1 event. */
export type RejectedReason = {
  [R in ReadyReason]: (typeof READY_REASONS)[R] extends { rejected: true } ? R : never;
}[ReadyReason];
export const REJECTED_REASONS: readonly RejectedReason[] = (Object.keys(READY_REASONS) as ReadyReason[]).filter(
  (reason): reason is RejectedReason => readyReason(reason)?.rejected === true,
);
