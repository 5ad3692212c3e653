// The event pipeline on the shared control plane: functions running as their ServiceAccounts,
// the local broker routing as knative/triggers.yaml does, and events shaped as the Knative
// sources send them. The tests act as the ApiServerSource and the PingSource.
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { apiServerEvent, type WatchEventType } from "../../dev/router/apiserver-events.ts";
import type { DeliveryRecord } from "../../dev/router/broker.ts";
import { installProductRbac, startPipeline, type Pipeline } from "../../dev/pipeline.ts";
import { TEST_MANAGER, adminClient } from "./helpers.ts";

export interface Harness {
  admin: KubeClient;
  pipeline: Pipeline;
  deliveries: DeliveryRecord[];
  logs: Record<string, unknown>[];
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const admin = await adminClient();
  await installProductRbac(admin, TEST_MANAGER);
  const deliveries: DeliveryRecord[] = [];
  const logs: Record<string, unknown>[] = [];
  const pipeline = await startPipeline({
    kubeconfig: inject("kubeconfig"),
    impersonate: true,
    env,
    onDelivery: (r) => deliveries.push(r),
    log: (line) => logs.push(JSON.parse(line)),
  });
  return { admin, pipeline, deliveries, logs };
}

export const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

export function watchEvent(type: WatchEventType, obj: KubeObject): CloudEvent {
  return apiServerEvent(type, obj, "https://127.0.0.1:6443", randomUUID(), now());
}

export function pingEvent(time = now()): CloudEvent {
  return {
    specversion: "1.0",
    id: randomUUID(),
    type: "dev.knative.sources.ping",
    source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
    time,
    extensions: {},
    data: undefined,
  };
}

const dgdRef = (ns: string, name: string) => ({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: ns, name });
const dprRef = (ns: string, name: string) => ({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name });

/** Publishes what the ApiServerSource would send for the DGD as it is now (or its deletion). */
export async function dgdEvent(h: Harness, ns: string, name: string, type: WatchEventType = "MODIFIED", lastSeen?: KubeObject): Promise<void> {
  const obj = type === "DELETED" ? lastSeen! : (await h.admin.get<KubeObject>(dgdRef(ns, name)))!;
  await h.pipeline.broker.publish(watchEvent(type, obj));
}

/** Publishes update events for the product's children as they are now, as the ApiServerSource would. */
export async function childEvents(h: Harness, ns: string): Promise<void> {
  const selector = "app.kubernetes.io/managed-by=dynamo-pool-relay";
  const objects = [
    ...(await h.admin.list<KubeObject>("apps/v1", "Deployment", ns, selector)).map((o) => ({ ...o, apiVersion: "apps/v1", kind: "Deployment" })),
    ...(await h.admin.list<KubeObject>("v1", "Service", ns, selector)).map((o) => ({ ...o, apiVersion: "v1", kind: "Service" })),
    ...(await h.admin.list<KubeObject>("discovery.k8s.io/v1", "EndpointSlice", ns, selector)).map((o) => ({ ...o, apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice" })),
  ];
  await Promise.all(objects.map((o) => h.pipeline.broker.publish(watchEvent("MODIFIED", o))));
}

export async function resync(h: Harness): Promise<void> {
  await h.pipeline.broker.publish(pingEvent());
  await h.pipeline.broker.idle();
}

export async function getDpr(h: Harness, ns: string, name: string) {
  return (await h.admin.get<KubeObject & { metadata: { generation: number }; status?: Record<string, any> }>(dprRef(ns, name)))!;
}

export function condition(dpr: { status?: Record<string, any> }, type: string): { status: string; reason: string; message: string } | undefined {
  return dpr.status?.["conditions"]?.find((c: { type: string }) => c.type === type);
}

export { dgdRef, dprRef };

/** The six children, in apply order. */
export const CHILD_REFS = [
  ["v1", "ServiceAccount"],
  ["rbac.authorization.k8s.io/v1", "Role"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
  ["v1", "ConfigMap"],
  ["apps/v1", "Deployment"],
  ["v1", "Service"],
] as const;
