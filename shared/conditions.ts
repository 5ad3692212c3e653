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
