/**
 * What the local kubelet reads from a Deployment or a Knative Service: the pod template to run, how
 * many copies (at most one runs here), and what a started container is given. Pure.
 */
import type { EnvVar } from "./pod-env.ts";

export interface ContainerSpec {
  name?: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { containerPort: number; name?: string }[];
  resources?: { limits?: { memory?: string | number } };
}

export interface Workload {
  kind: "Deployment" | "KnativeService";
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  /** 0 stops it; anything more runs one process per container with a known image. */
  replicas: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  serviceAccountName: string;
  containers: ContainerSpec[];
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { serviceAccountName?: string; containers?: ContainerSpec[] };
}

interface Watched {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; generation?: number; deletionTimestamp?: string };
  spec?: { replicas?: number; template?: PodTemplate };
}

export function workloadKey(w: Pick<Workload, "kind" | "namespace" | "name">): string {
  return `${w.kind} ${w.namespace}/${w.name}`;
}

/** The workload an object describes; undefined for other kinds. A deleted object runs nothing. */
export function workloadOf(obj: Watched): Workload | undefined {
  const kind =
    obj.apiVersion === "apps/v1" && obj.kind === "Deployment" ? "Deployment"
    : obj.apiVersion.startsWith("serving.knative.dev/") && obj.kind === "Service" ? "KnativeService"
    : undefined;
  if (!kind) return undefined;
  const template = obj.spec?.template ?? {};
  // A Knative Service scales to zero when idle; here it runs one process all the time.
  const replicas = obj.metadata.deletionTimestamp ? 0 : kind === "Deployment" ? (obj.spec?.replicas ?? 1) : 1;
  return {
    kind,
    namespace: obj.metadata.namespace ?? "default",
    name: obj.metadata.name,
    uid: obj.metadata.uid ?? "",
    generation: obj.metadata.generation ?? 0,
    replicas,
    labels: template.metadata?.labels ?? {},
    annotations: template.metadata?.annotations ?? {},
    serviceAccountName: template.spec?.serviceAccountName ?? "default",
    containers: template.spec?.containers ?? [],
  };
}

/** Knative Serving's contract: the user container listens on $PORT, its declared containerPort (default 8080). */
export function servingPort(c: ContainerSpec): number {
  return c.ports?.[0]?.containerPort ?? 8080;
}

export function containerName(c: ContainerSpec, index: number): string {
  return c.name ?? (index === 0 ? "user-container" : `user-container-${index}`);
}

/** A selector matches a pod template when every key/value is among its labels. */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
}

/** The container port a Service's targetPort names (a number, or a port name). */
export function containerPortOf(c: ContainerSpec, targetPort: number | string): number | undefined {
  if (typeof targetPort === "number") return targetPort;
  if (/^\d+$/.test(targetPort)) return Number(targetPort);
  return c.ports?.find((p) => p.name === targetPort)?.containerPort;
}

/** Knative Serving's address for a Service: cluster-local, as its visibility label asks. */
export function servingUrl(w: Pick<Workload, "namespace" | "name">): string {
  return `http://${w.name}.${w.namespace}.svc.cluster.local`;
}

/**
 * The status Knative Serving would report for a Knative Service whose container runs (or not):
 * Ready with its address, which is what Triggers and SinkBindings resolve a Service reference to.
 */
export function servingStatus(w: Workload, running: boolean, reason: string | undefined, now: string): Record<string, unknown> {
  const condition = (type: string) => ({
    type,
    status: running ? "True" : "False",
    lastTransitionTime: now,
    ...(running ? {} : { reason: "LocalProcessNotRunning", message: reason ?? "the local process is not running" }),
  });
  return {
    observedGeneration: w.generation,
    conditions: ["ConfigurationsReady", "Ready", "RoutesReady"].map(condition),
    url: servingUrl(w),
    address: { url: servingUrl(w) },
  };
}
