/**
 * The product on the real node as the tests and benches observe it: what each function invocation
 * logged (one JSON line, functions/runtime/serve.ts), read from the log agent's copies
 * (pod-logs.ts), which outlive the pods Knative scales to zero; and whether the ApiServerSource's
 * adapter watches a namespace and runs alone.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KubeClient } from "../../shared/kube/client.ts";
import { PRODUCT_NAMESPACE } from "../product.ts";

export type ProductFunction = "eligibility" | "apply" | "status" | "dead-letter";
export const PRODUCT_FUNCTIONS: readonly ProductFunction[] = ["eligibility", "apply", "status", "dead-letter"];

/** One function invocation, as the function logged it. */
export interface Invocation {
  function: string;
  event: { id: string; type: string; source: string; subject?: string };
  decision?: string;
  /** With the reply's own extensions: `statuswritten` routes a report nowhere (knative/triggers.yaml). */
  reply?: { id: string; type: string; statuswritten?: string };
  status: number;
  error?: string;
  reads: number;
  writes: number;
  key?: { namespace: string; name: string; cause?: string };
  ms: number;
  deadlineExceeded?: boolean;
  [field: string]: unknown;
}

/**
 * Each pod's invocations of the function so far, in order, by the file the log agent keeps them in
 * (`logs` is its `to`): a caller that remembers the counts reads what came since. The Knative
 * Service's pods are named after it (poolrelay-<fn>-<revision>-deployment-…), its container `function`.
 */
export function invocationsByPod(logs: string, fn: ProductFunction): Map<string, Invocation[]> {
  const dir = join(logs, PRODUCT_NAMESPACE);
  const pods = existsSync(dir) ? readdirSync(dir).filter((p) => p.startsWith(`poolrelay-${fn}-`)) : [];
  const out = new Map<string, Invocation[]>();
  for (const file of pods.map((p) => join(dir, p, "function.log")).filter((f) => existsSync(f))) {
    // Only the invocations' lines: the container may log others.
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Invocation);
    out.set(
      file,
      lines.filter((i) => i.function === fn),
    );
  }
  return out;
}

/** Every invocation of every function so far, by log file. */
export function allInvocationsByPod(logs: string): Map<string, Invocation[]> {
  return new Map(PRODUCT_FUNCTIONS.flatMap((fn) => [...invocationsByPod(logs, fn)]));
}

interface Adapter {
  metadata: { name: string; generation: number };
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } };
  };
  status?: { observedGeneration?: number; updatedReplicas?: number; readyReplicas?: number };
}

/**
 * Whether the ApiServerSource's adapter watches `namespace` and runs alone. The controller writes
 * the namespaces into the adapter's Deployment, so a new namespace rolls the adapter; while the
 * old and the new one both run, every change is sent twice, and an adapter that stops cancels what
 * it sent while that is still being delivered (the Broker's retries of it and of the replies it
 * caused: the whole chain runs in the adapter's request). A probe: callers poll it with their own wait.
 */
export async function sourceWatchesAlone(client: KubeClient, namespace: string): Promise<boolean> {
  // The product's own source (knative/source.yaml) watches every namespace and never rolls.
  const adapters = (await client.list<Adapter>("apps/v1", "Deployment", PRODUCT_NAMESPACE)).filter((d) =>
    d.metadata.name.startsWith("apiserversource-"),
  );
  if (adapters.length !== 1) return false;
  const [adapter] = adapters as [Adapter];
  const config =
    adapter.spec.template.spec.containers[0]?.env?.find((e) => e.name === "K_SOURCE_CONFIG")?.value ?? "{}";
  if ((JSON.parse(config) as { namespaces?: string[] }).namespaces?.includes(namespace) !== true) return false;
  // Alone: one pod, of the current template, Ready; none of an earlier one still stopping.
  const selector = Object.entries(adapter.spec.selector.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await client.list<{ metadata: { deletionTimestamp?: string } }>(
    "v1",
    "Pod",
    PRODUCT_NAMESPACE,
    selector,
  );
  const s = adapter.status ?? {};
  return (
    s.observedGeneration === adapter.metadata.generation &&
    s.updatedReplicas === 1 &&
    s.readyReplicas === 1 &&
    pods.length === 1 &&
    !pods[0]!.metadata.deletionTimestamp
  );
}
