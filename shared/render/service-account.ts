/** The Relay's own identity; the Role below grants it what Kubernetes discovery in Pod mode needs. */
import type { DynamoPoolRelay } from "../api/dynamo-pool-relay.ts";
import { childMeta } from "./metadata.ts";

export function renderServiceAccount(dpr: DynamoPoolRelay) {
  return { apiVersion: "v1", kind: "ServiceAccount", metadata: childMeta(dpr) };
}
