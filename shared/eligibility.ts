/**
 * Whether the DynamoGraphDeployment of a DynamoPoolRelay's name can have a Relay: the Relay
 * discovers workers only through Kubernetes discovery in Pod mode, and it is published as the
 * Service `<dgd>-pool-relay`, so the name must form a DNS-1035 label.
 */
import { serviceNameProblem } from "./api/dynamo-pool-relay.ts";
import { components, isWorker, type Component, type DynamoGraphDeployment } from "./api/dynamo-graph-deployment.ts";
import { ANNOTATION_DISCOVERY_BACKEND, ANNOTATION_DISCOVERY_MODE } from "./names.ts";
import { Reason } from "./conditions.ts";

export const DISCOVERY_BACKENDS = ["kubernetes", "etcd"] as const;
export type DiscoveryBackend = (typeof DISCOVERY_BACKENDS)[number];
export const DISCOVERY_MODES = ["pod", "container"] as const;

export interface OperatorDefaults {
  /** The Dynamo operator's `discovery.backend`; `kubernetes` unless the operator was configured otherwise. */
  discoveryBackend: DiscoveryBackend;
}

export const DEFAULT_OPERATOR_DEFAULTS: OperatorDefaults = { discoveryBackend: "kubernetes" };

export type Eligibility = { eligible: true } | { eligible: false; reason: IneligibleReason; message: string };

export type IneligibleReason =
  | typeof Reason.InvalidServiceName
  | typeof Reason.DGDNotFound
  | typeof Reason.DGDDeleting
  | typeof Reason.UnknownDiscoveryBackend
  | typeof Reason.DiscoveryBackendNotKubernetes
  | typeof Reason.UnknownDiscoveryMode
  | typeof Reason.DiscoveryModeNotPod;

interface Resolved {
  value: string;
  from: string;
}

/** DGD metadata annotation, else the component's own annotation; undefined when neither sets it. */
function annotated(key: string, dgd: DynamoGraphDeployment, component: Component | undefined): Resolved | undefined {
  const fromDgd = dgd.metadata.annotations?.[key];
  if (fromDgd !== undefined) return { value: fromDgd, from: `the DynamoGraphDeployment's annotation ${key}` };
  const fromComponent = component?.annotations[key];
  if (fromComponent !== undefined)
    return { value: fromComponent, from: `component "${component!.name}"'s annotation ${key}` };
  return undefined;
}

function componentEligibility(
  dgd: DynamoGraphDeployment,
  component: Component | undefined,
  defaults: OperatorDefaults,
): Eligibility {
  const subject = component ? `worker component "${component.name}"` : "the DynamoGraphDeployment";
  const backend = annotated(ANNOTATION_DISCOVERY_BACKEND, dgd, component) ?? {
    value: defaults.discoveryBackend,
    from: "the operator's default backend",
  };
  if (!(DISCOVERY_BACKENDS as readonly string[]).includes(backend.value)) {
    return {
      eligible: false,
      reason: Reason.UnknownDiscoveryBackend,
      message: `${subject} has discovery backend "${backend.value}" from ${backend.from}; expected one of ${DISCOVERY_BACKENDS.join(", ")}`,
    };
  }
  if (backend.value !== "kubernetes") {
    return {
      eligible: false,
      reason: Reason.DiscoveryBackendNotKubernetes,
      message: `${subject} uses discovery backend "${backend.value}" (from ${backend.from}); the Relay needs Kubernetes discovery`,
    };
  }
  // Without an annotation the mode is Pod: the Dynamo operator's default, and what the Relay needs.
  const mode = annotated(ANNOTATION_DISCOVERY_MODE, dgd, component);
  if (mode === undefined) return { eligible: true };
  if (!(DISCOVERY_MODES as readonly string[]).includes(mode.value)) {
    return {
      eligible: false,
      reason: Reason.UnknownDiscoveryMode,
      message: `${subject} has Kubernetes discovery mode "${mode.value}" from ${mode.from}; expected one of ${DISCOVERY_MODES.join(", ")}`,
    };
  }
  if (mode.value !== "pod") {
    return {
      eligible: false,
      reason: Reason.DiscoveryModeNotPod,
      message: `${subject} uses Kubernetes discovery mode "${mode.value}" (from ${mode.from}); the Relay needs Pod mode`,
    };
  }
  return { eligible: true };
}

/**
 * Decides eligibility of the DGD named `name`. Every worker component must resolve to Kubernetes
 * Pod-mode discovery; a DGD without workers is judged by its own annotations and the defaults.
 */
export function eligibility(
  name: string,
  dgd: DynamoGraphDeployment | undefined,
  defaults: OperatorDefaults,
): Eligibility {
  const nameProblem = serviceNameProblem(name);
  if (nameProblem) return { eligible: false, reason: Reason.InvalidServiceName, message: nameProblem };
  return dgdEligibility(name, dgd, defaults);
}

/**
 * Decides eligibility of the DGD named `name` whatever its name: a DGD a selector picks serves a
 * Relay named after its DynamoPoolRelay, not after the DGD.
 */
export function dgdEligibility(
  name: string,
  dgd: DynamoGraphDeployment | undefined,
  defaults: OperatorDefaults,
): Eligibility {
  if (!dgd) {
    return {
      eligible: false,
      reason: Reason.DGDNotFound,
      message: `DynamoGraphDeployment "${name}" does not exist in this namespace`,
    };
  }
  if (dgd.metadata.deletionTimestamp) {
    return { eligible: false, reason: Reason.DGDDeleting, message: `DynamoGraphDeployment "${name}" is being deleted` };
  }
  const workers = components(dgd).filter(isWorker);
  for (const component of workers.length > 0 ? workers : [undefined]) {
    const verdict = componentEligibility(dgd, component, defaults);
    if (!verdict.eligible) return verdict;
  }
  return { eligible: true };
}
