/** The ConfigMap holding the Relay's sources document, mounted as a directory so updates reach running pods. */
import type { Decision } from "../decide.ts";
import { SOURCES_KEY } from "../names.ts";
import { childMeta } from "./metadata.ts";

export function renderConfigMap(decision: Extract<Decision, { action: "apply" }>) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: childMeta(decision.dpr),
    data: { [SOURCES_KEY]: decision.sources.text },
  };
}
