/**
 * Names, labels and fixed values of the product: every object the product writes is named and
 * labelled from here, so a rename is one edit.
 */

export const GROUP = "nvidia.com";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "DynamoPoolRelay";
export const PLURAL = "dynamopoolrelays";
export const SINGULAR = "dynamopoolrelay";
export const SHORT_NAME = "dpr";
export const CATEGORY = "dynamo";

export const PRODUCT = "dynamo-pool-relay";
/**
 * The apply function's server-side apply field manager, which forces: the DynamoPoolRelay is the
 * source of truth for the children it controls (foreign ones are never applied). The status
 * function recognizes apply's writes by it.
 */
export const APPLY_FIELD_MANAGER = `${PRODUCT}/apply`;
export const SERVICE_SUFFIX = "-pool-relay";
/** A Service name is a DNS-1035 label: at most 63 characters, so the DGD name gets 63 - 11. */
export const MAX_DGD_NAME_LENGTH = 63 - SERVICE_SUFFIX.length;
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Namespace names, as the API server validates them. */
export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Object names of most kinds, as the API server validates them (at most 253 characters). */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Can this name be a DynamoPoolRelay's, i.e. form the Service name `<name>-pool-relay`? */
export function canPair(name: string): boolean {
  return name.length <= MAX_DGD_NAME_LENGTH && DNS1035_LABEL.test(name);
}

export const GRPC_PORT = 5561;
export const SYSTEM_PORT = 8081;
export const GRPC_SERVICE = "dynamo.kvrelay.v1.KvEventRelay";
export const SOURCES_KEY = "sources.json";
export const SOURCES_DIR = "/etc/pool-relay";
export const SOURCES_PATH = `${SOURCES_DIR}/${SOURCES_KEY}`;
export const CONTAINER_NAME = "relay";

/** Every child of a DynamoPoolRelay shares one name; the kinds never collide. */
export function childName(dgdName: string): string {
  return `${dgdName}${SERVICE_SUFFIX}`;
}

export function serviceEndpoint(dgdName: string, namespace: string): string {
  return `${childName(dgdName)}.${namespace}.svc:${GRPC_PORT}`;
}

export const LABEL_NAME = "app.kubernetes.io/name";
export const LABEL_INSTANCE = "app.kubernetes.io/instance";
export const LABEL_COMPONENT = "app.kubernetes.io/component";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const LABEL_PART_OF = "app.kubernetes.io/part-of";
export const LABEL_DGD_NAME = "nvidia.com/dynamo-graph-deployment-name";
export const LABEL_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend";
export const LABEL_DISCOVERY_ENABLED = "nvidia.com/dynamo-discovery-enabled";

/** Labels that select one DynamoPoolRelay's pods; never changed after creation (Deployment selectors are immutable). */
export function selectorLabels(dgdName: string): Record<string, string> {
  return {
    [LABEL_NAME]: PRODUCT,
    [LABEL_INSTANCE]: dgdName,
  };
}

export function commonLabels(dgdName: string): Record<string, string> {
  return {
    ...selectorLabels(dgdName),
    [LABEL_COMPONENT]: "pool-relay",
    [LABEL_MANAGED_BY]: PRODUCT,
    [LABEL_PART_OF]: "dynamo",
    [LABEL_DGD_NAME]: dgdName,
  };
}

/**
 * Knative Eventing's SinkBinding webhook (failure policy Fail) is called for every Deployment write
 * in the cluster, the controllers' status updates included, unless the object carries this label.
 * A Relay Deployment is never a SinkBinding's subject: with it, its writes neither wait on nor fail
 * with eventing-webhook.
 */
export const SINK_BINDING_EXCLUDE: Readonly<Record<string, string>> = { "bindings.knative.dev/exclude": "true" };

/** The Relay registers through Kubernetes discovery, which watches only objects with both labels. */
export const DISCOVERY_LABELS: Readonly<Record<string, string>> = {
  [LABEL_DISCOVERY_BACKEND]: "kubernetes",
  [LABEL_DISCOVERY_ENABLED]: "true",
};

export const ANNOTATION_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend";
export const ANNOTATION_DISCOVERY_MODE = "nvidia.com/dynamo-kube-discovery-mode";
export const ANNOTATION_WORKER_HASH = "nvidia.com/current-worker-hash";
export const ANNOTATION_WORKER_HASH_V2 = "nvidia.com/current-worker-hash-v2";
export const GLOBAL_DYNAMO_NAMESPACE = "dynamo";
