// The memory limit of a function's Knative Service, which the benches run its process under
// (memory-cgroup.ts), as the kubelet runs the pod's container.
import { memoryLimitBytes } from "./memory-cgroup.ts";
import { knativeDocs } from "./knative-settings.ts";

/** The memory limit of a function's Knative Service (knative/services.yaml). */
export function serviceMemoryLimit(target: string): { text: string; bytes: number } {
  const container = knativeDocs("services.yaml").find((d) => d.metadata.name === `poolrelay-${target}`)?.spec.template
    ?.spec.containers[0];
  const bytes = container && memoryLimitBytes(container);
  const text = container?.resources?.limits?.memory;
  if (bytes === undefined || text === undefined)
    throw new Error(`knative/services.yaml declares no memory limit for poolrelay-${target}`);
  return { text, bytes };
}
