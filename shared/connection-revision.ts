/**
 * The connection revision names one Relay incarnation: the settings that, when changed, make a new
 * Relay (cluster ID, image, command, env, listener). It goes into both the sources document and
 * the pod template, so a change of worker namespaces rewrites only the ConfigMap while a change of
 * these settings rolls the pods, and old pods keep their last sources instead of taking a document
 * meant for their successors.
 */
import type { DynamoPoolRelaySpec } from "./api/dynamo-pool-relay.ts";
import { GRPC_PORT, SOURCES_PATH } from "./names.ts";
import { DEFAULT_RELAY_COMMAND } from "./relay-env.ts";
import { sha256Hex } from "./sources-document.ts";

/** Bumped when the inputs below change meaning, so old and new product versions never share a revision. */
const SCHEME = "dynamo-pool-relay/connection/v1";

/** JSON with object keys sorted, arrays in order: the same value always hashes the same. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      // An object's keys are distinct, so never equal.
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * @param command the Relay container's command, an operator-wide setting rather than the spec's.
 * Hashed only when it is not the default, so that revisions from before it was configurable stay
 * the same and upgrading the product rolls no Relay (a new default must bump SCHEME instead).
 */
export function connectionRevision(
  spec: Pick<DynamoPoolRelaySpec, "clusterID" | "image" | "env">,
  command: readonly string[],
): string {
  const isDefault =
    command.length === DEFAULT_RELAY_COMMAND.length && command.every((c, i) => c === DEFAULT_RELAY_COMMAND[i]);
  return sha256Hex(
    stableJson({
      scheme: SCHEME,
      clusterID: spec.clusterID,
      image: spec.image,
      command: isDefault ? undefined : command,
      // Order matters: a later entry may reference an earlier one as $(NAME).
      env: spec.env ?? [],
      grpcPort: GRPC_PORT,
      sourcesPath: SOURCES_PATH,
    }),
  );
}
