// What the benchmarks on the real node share: waiting for Knative to roll the ApiServerSource
// adapter for a new namespace (until then every change is sent twice), reading what each
// function invocation logged (one JSON line each, kept by the log agent), the Relay pods' place,
// and timing the cluster alone to Relay pods Ready.
import { readFileSync } from "node:fs";
import { FAKE_NODE_PLACEMENT } from "../dev/control-plane/index.ts";
import { allInvocationsByPod, sourceWatchesAlone, type Invocation } from "../dev/node/product-observed.ts";
import { desiredChildren } from "../shared/apply-plan.ts";
import { parseConfig } from "../shared/config.ts";
import { decide, type Decision } from "../shared/decide.ts";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";
import { sent, sentFacts } from "../shared/source-events.ts";
import { readyEndpoints, rolledOut, type ObservedDeployment, type ObservedEndpointSlice } from "../shared/status.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 120_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Creates the namespace and waits until the ApiServerSource adapter watches it and runs alone (dev/node/product-observed.ts). */
export async function namespaceWatched(admin: KubeClient, ns: string, manager: string): Promise<void> {
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, manager);
  await until(`the ApiServerSource adapter watching ${ns} alone`, () => sourceWatchesAlone(admin, ns), 180_000, 500);
  await sleep(1000); // its informers' initial list, which its readiness does not wait for
}

/** The invocations logged after `before` (allInvocationsByPod of the log agent's folder `logs`, earlier). */
export function since(logs: string, before: Map<string, Invocation[]>): Invocation[] {
  return [...allInvocationsByPod(logs)].flatMap(([log, lines]) => lines.slice(before.get(log)?.length ?? 0));
}

/** A process's resident memory now (VmRSS) or at its peak (VmHWM), in MiB; undefined once it has exited. */
export function procStatusMiB(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  try {
    const kB = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kB === undefined ? undefined : Number(kB) / 1024;
  } catch {
    return undefined;
  }
}

export const dgd = (namespace: string, name: string): KubeObject => ({
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: { name, namespace },
  spec: { components: [{ name: "decode", type: "decode" }] },
});
// Its Relay pods on kwok's nodes (no process in them: the real node holds Knative and the
// functions), with small requests, so that the kwok nodes' CPU does not bound how many are scheduled.
export const dpr = (namespace: string, name: string): KubeObject => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name, namespace },
  spec: {
    image: "relay:1",
    clusterID: "bench",
    resources: { requests: { cpu: "10m", memory: "16Mi" } },
    ...FAKE_NODE_PLACEMENT,
  },
});

const DEFAULTS = parseConfig({}).defaults;

/** What selects the children the bench applies alone (childrenAlone). */
export const ALONE_SELECTOR = "app.kubernetes.io/managed-by=bench-ssa";

/**
 * A pair's six children as the product renders them, offline (no owner to point at), for the
 * API server to take alone. Another managed-by label (ALONE_SELECTOR) keeps them, and their
 * EndpointSlices, out of the product's own event source; `labels` are added to it.
 */
export function childrenAlone(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject[] {
  const decision = decide(dpr(namespace, name), dgd(namespace, name), DEFAULTS) as Extract<
    Decision,
    { action: "apply" }
  >;
  return desiredChildren(decision).map((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      labels: {
        ...(o.metadata as { labels?: Record<string, string> }).labels,
        "app.kubernetes.io/managed-by": "bench-ssa",
        ...labels,
      },
    },
  }));
}

type WatchedDeployment = KubeObject & ObservedDeployment;
type WatchedSlice = KubeObject & ObservedEndpointSlice;

/**
 * Watches the Deployments and EndpointSlices that `labelSelector` selects: `watching` resolves once
 * both watches are open; `ready`, once `count` Services have one, with the time (performance.now()) at which each Service first had
 * what the product's status calls Ready: a replica of its Deployment's current template available
 * and a ready endpoint behind it (shared/status.ts). The Deployment is the one named as its
 * Service, as the product names them. Stops at `timeoutMs`, with what it saw by then.
 */
export function readyAlone(
  admin: KubeClient,
  labelSelector: string,
  count: number,
  timeoutMs: number,
): { watching: Promise<void>; ready: Promise<Map<string, number>> } {
  const deployments = new Map<string, WatchedDeployment>();
  const slices = new Map<string, Map<string, WatchedSlice>>();
  const readyAt = new Map<string, number>();
  const abort = new AbortController();
  const check = (service: string) => {
    if (readyAt.has(service)) return;
    if (rolledOut(deployments.get(service)) && readyEndpoints([...(slices.get(service)?.values() ?? [])]) > 0)
      readyAt.set(service, performance.now());
    if (readyAt.size >= count) abort.abort();
  };
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  let opened = 0;
  let bothOpen!: () => void;
  const watching = new Promise<void>((resolve) => (bothOpen = resolve));
  const started = () => ++opened === 2 && bothOpen();
  // The API server ends a watch after its timeout (30 to 60 minutes): a count cut short by it would pass for the cluster's own.
  const ended = (kind: string) => () => {
    if (!abort.signal.aborted)
      throw new Error(
        `the ${kind} watch ended before ${count} were Ready or ${timeoutMs} ms passed (${readyAt.size} were)`,
      );
  };
  const ready = Promise.all([
    admin
      .listAndWatch<WatchedDeployment>(
        "apps/v1",
        "Deployment",
        labelSelector,
        (type, d) => {
          if (type === "DELETED") deployments.delete(d.metadata.name);
          else deployments.set(d.metadata.name, d);
          check(d.metadata.name);
        },
        abort.signal,
        undefined,
        started,
      )
      .then(ended("Deployment")),
    admin
      .listAndWatch<WatchedSlice>(
        "discovery.k8s.io/v1",
        "EndpointSlice",
        labelSelector,
        (type, s) => {
          const service = (s.metadata as { labels?: Record<string, string> }).labels?.["kubernetes.io/service-name"];
          if (!service) return;
          const of = slices.get(service) ?? new Map<string, WatchedSlice>();
          if (type === "DELETED") of.delete(s.metadata.name);
          else of.set(s.metadata.name, s);
          slices.set(service, of);
          check(service);
        },
        abort.signal,
        undefined,
        started,
      )
      .then(ended("EndpointSlice")),
  ])
    .then(() => readyAt)
    .finally(() => {
      clearTimeout(timer);
      abort.abort();
    });
  return { watching, ready };
}

/**
 * An independent watch of what the product's sources send events about in `namespace` (the
 * DynamoPoolRelays and the labelled children), keeping each object's last version and how it came
 * (bench/lost-changes.ts compares them with what reached the Broker). Stop it with the signal.
 */
export function watchChanges(
  admin: KubeClient,
  namespace: string,
  signal: AbortSignal,
): { watching: Promise<void>; last: Map<string, LastSeen>; unsent: { count: number } } {
  const last = new Map<string, LastSeen>();
  const seen = new Map<string, KubeObject>();
  const unsent = { count: 0 };
  const kinds = [
    ["nvidia.com/v1alpha1", "DynamoPoolRelay", undefined],
    ["apps/v1", "Deployment", "app.kubernetes.io/managed-by=dynamo-pool-relay"],
    ["v1", "Service", "app.kubernetes.io/managed-by=dynamo-pool-relay"],
    ["v1", "ConfigMap", "app.kubernetes.io/managed-by=dynamo-pool-relay"],
    ["discovery.k8s.io/v1", "EndpointSlice", "app.kubernetes.io/managed-by=dynamo-pool-relay"],
  ] as const;
  let opened = 0;
  let allOpen!: () => void;
  const watching = new Promise<void>((resolve) => (allOpen = resolve));
  const changes = { ADDED: "add", MODIFIED: "update", DELETED: "delete" } as const;
  for (const [apiVersion, kind, selector] of kinds) {
    void admin.listAndWatch<KubeObject>(
      apiVersion,
      kind,
      selector,
      (type, o) => {
        if (o.metadata.namespace !== namespace) return;
        const key = `${namespace}/${o.metadata.name}`;
        const id = `${kind}/${key}`;
        const before = seen.get(id);
        const previous = before && sentFacts(before);
        if (type === "DELETED") seen.delete(id);
        else seen.set(id, o);
        // Only what the source is to send counts; what it leaves out by design is counted apart.
        if (sent(changes[type], o, previous))
          last.set(id, { kind, key, resourceVersion: o.metadata.resourceVersion ?? "", change: changes[type] });
        else unsent.count++;
      },
      signal,
      undefined,
      () => ++opened === kinds.length && allOpen(),
    );
  }
  return { watching, last, unsent };
}

export interface LastSeen {
  kind: string;
  key: string;
  resourceVersion: string;
  change: "add" | "update" | "delete";
}
