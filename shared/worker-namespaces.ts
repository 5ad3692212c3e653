/**
 * The Dynamo namespaces a DGD's workers register under. The Relay matches namespaces exactly, so
 * during a rollout, when old and new worker generations run side by side under different hashes,
 * both must be listed.
 */
import { components, isWorker, type Component, type DynamoGraphDeployment } from "./api/dynamo-graph-deployment.ts";
import { ANNOTATION_WORKER_HASH, ANNOTATION_WORKER_HASH_V2, GLOBAL_DYNAMO_NAMESPACE } from "./names.ts";
import { compareBytes } from "./bytes.ts";

/** `<k8s namespace>-<dgd name>`, dots replaced because they separate Dynamo endpoint path segments. */
export function baseNamespace(namespace: string, dgdName: string): string {
  return `${namespace}-${dgdName.replaceAll(".", "-")}`;
}

const HASH = /^[a-z0-9]+$/;

/**
 * Hashes of the generations a component's workloads show, read from the workload names in
 * status.components (`<dgd>-<component>-<hash>`). A name without a hash counts as the empty hash.
 */
function hashesFromStatus(dgd: DynamoGraphDeployment, component: Component): string[] {
  const names = dgd.status?.components?.[component.name]?.componentNames ?? [];
  const prefix = `${dgd.metadata.name}-${component.name.toLowerCase()}`;
  const hashes: string[] = [];
  for (const name of names) {
    if (name === prefix) hashes.push("");
    else if (name.startsWith(`${prefix}-`) && HASH.test(name.slice(prefix.length + 1)))
      hashes.push(name.slice(prefix.length + 1));
  }
  return hashes;
}

/**
 * Both controller-owned hash annotations: a worker workload counts as current when its hash
 * matches either, so listing both never misses the live generation (an empty namespace costs the
 * Relay nothing, a missing one loses a pool).
 */
function hashesFromAnnotations(dgd: DynamoGraphDeployment): string[] {
  const annotations = dgd.metadata.annotations ?? {};
  return [annotations[ANNOTATION_WORKER_HASH_V2], annotations[ANNOTATION_WORKER_HASH]].filter(
    (h): h is string => h !== undefined && HASH.test(h),
  );
}

/**
 * The worker hashes live in the DGD. The operator computes one hash per DGD over all worker specs,
 * so a hash any worker's workloads show, or the annotations name, is every worker's: a component
 * whose own workloads are not in the status yet (a prefill added by the rollout) already runs
 * under it, not in `<base>`.
 */
function liveHashes(dgd: DynamoGraphDeployment, workers: readonly Component[]): string[] {
  return [...workers.flatMap((c) => hashesFromStatus(dgd, c)), ...hashesFromAnnotations(dgd)];
}

/** The worker namespaces of a DGD: sorted byte-wise, without duplicates. */
export function workerNamespaces(dgd: DynamoGraphDeployment): string[] {
  const workers = components(dgd).filter(isWorker);
  const base = baseNamespace(dgd.metadata.namespace ?? "", dgd.metadata.name);
  const hashes = liveHashes(dgd, workers);
  // `<base>` alone only when nothing names a hash: that is where hashless workers register.
  const inBase = hashes.length === 0 ? [base] : hashes.map((hash) => (hash === "" ? base : `${base}-${hash}`));
  const all = workers.flatMap((c) => (c.globalDynamoNamespace ? [GLOBAL_DYNAMO_NAMESPACE] : inBase));
  return [...new Set(all)].sort(compareBytes);
}
