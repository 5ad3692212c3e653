/**
 * The process the product runs in every Relay container: its default command, the environment the
 * product gives it, and the names users may therefore not set in spec.env. Both the CRD's
 * admission rule and the core's validation read RESERVED_ENV.
 */

/**
 * The pre-rename runtime's entry point, the one whose file mode and connection revision the product
 * speaks. Operators whose runtime has another entry point set RELAY_COMMAND instead.
 */
export const DEFAULT_RELAY_COMMAND: readonly string[] = ["python3", "-m", "dynamo.kv_dc_relay"];

export const ENV_DC_ID = "DYN_DC_ID";
export const ENV_CONNECTION_REVISION = "DYN_RELAY_CONNECTION_REVISION";
export const ENV_DISCOVERY_BACKEND = "DYN_DISCOVERY_BACKEND";
export const ENV_DISCOVERY_MODE = "DYN_KUBE_DISCOVERY_MODE";
export const ENV_NAMESPACE = "DYN_NAMESPACE";
export const ENV_SYSTEM_PORT = "DYN_SYSTEM_PORT";
export const ENV_POD_NAME = "POD_NAME";
export const ENV_POD_NAMESPACE = "POD_NAMESPACE";
export const ENV_POD_UID = "POD_UID";

/** Names the product sets on the Relay container. */
export const PRODUCT_ENV = [
  ENV_DC_ID,
  ENV_CONNECTION_REVISION,
  ENV_DISCOVERY_BACKEND,
  ENV_DISCOVERY_MODE,
  ENV_NAMESPACE,
  ENV_SYSTEM_PORT,
  ENV_POD_NAME,
  ENV_POD_NAMESPACE,
  ENV_POD_UID,
] as const;

/**
 * Relay scope settings are mutually exclusive with --sources-file and --bind is fixed by the
 * Service, so letting users set them would break the Relay at start-up.
 */
export const SCOPE_ENV = [
  "DYN_RELAY_BIND",
  "DYN_RELAY_NAMESPACES",
  "DYN_RELAY_WATCH_ALL",
  "DYN_RELAY_ENDPOINT_PREFIXES",
] as const;

export const RESERVED_ENV: readonly string[] = [...PRODUCT_ENV, ...SCOPE_ENV].sort();

export function isReservedEnv(name: string): boolean {
  return RESERVED_ENV.includes(name);
}
