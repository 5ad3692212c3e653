// Steps of the end-to-end tests: objects in, state out. Events are the real ones: the
// ApiServerSource and the DynamoPoolRelay watch send them when the tests change objects, the
// Broker and Triggers route them, and the functions run as their ServiceAccounts with RBAC on.
import { randomUUID } from "node:crypto";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import type { Condition } from "../../shared/api/kubernetes.ts";
import type { DynamoPoolRelayStatus } from "../../shared/api/dynamo-pool-relay.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually } from "./helpers.ts";

export const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

export const dgdRef = (ns: string, name: string) => ({
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  namespace: ns,
  name,
});
export const dprRef = (ns: string, name: string) => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  namespace: ns,
  name,
});

export type Dpr = KubeObject & { metadata: { generation: number; uid: string }; status?: DynamoPoolRelayStatus };

export async function getDpr(admin: KubeClient, ns: string, name: string): Promise<Dpr> {
  return (await admin.get<Dpr>(dprRef(ns, name)))!;
}

export function condition(
  dpr: { status?: { conditions?: Condition[] | undefined } | undefined },
  type: string,
): { status: string; reason: string; message: string; observedGeneration?: number } | undefined {
  return dpr.status?.["conditions"]?.find((c: { type: string }) => c.type === type);
}

/** The six children, each after what it needs. */
export const CHILD_REFS = [
  ["v1", "ServiceAccount"],
  ["rbac.authorization.k8s.io/v1", "Role"],
  ["rbac.authorization.k8s.io/v1", "RoleBinding"],
  ["v1", "ConfigMap"],
  ["apps/v1", "Deployment"],
  ["v1", "Service"],
] as const;

/** A child as the tests read it: the metadata the API server adds, and the fields of its kind. */
export type Child<Fields = object> = KubeObject & {
  metadata: {
    generation?: number;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
    managedFields?: { manager: string }[];
  };
} & Fields;

export type ChildRole = Child<{ rules: unknown[] }>;
export type ChildConfigMap = Child<{ data: Record<string, string> }>;
export type ChildDeployment = Child<{
  spec: {
    replicas: number;
    template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } };
  };
}>;
export type ChildService = Child<{ spec: { ports: unknown[] } }>;

/** The six children by kind; a child not there is undefined. */
export interface Children {
  ServiceAccount?: Child | undefined;
  Role?: ChildRole | undefined;
  RoleBinding?: Child | undefined;
  ConfigMap?: ChildConfigMap | undefined;
  Deployment?: ChildDeployment | undefined;
  Service?: ChildService | undefined;
}

export async function children(admin: KubeClient, ns: string, name = "g1"): Promise<Children> {
  const out: Record<string, KubeObject | undefined> = {};
  for (const [apiVersion, kind] of CHILD_REFS)
    out[kind] = await admin.get({ apiVersion, kind, namespace: ns, name: `${name}-pool-relay` });
  return out;
}

/** Waits until the status reflects the current generation and satisfies `check`. */
export async function settledDpr(
  ns: string,
  name: string,
  what: string,
  check: (d: Dpr) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<Dpr> {
  const admin = await adminClient();
  return eventually(
    `${ns}/${name} ${what}`,
    async () => {
      const d = await getDpr(admin, ns, name);
      return d.status?.["observedGeneration"] === d.metadata.generation && check(d) ? d : undefined;
    },
    timeoutMs,
  );
}

/** A DGD and its DynamoPoolRelay, created as a user would; resolves once the product has published. */
export async function published(
  ns: string,
  name = "g1",
  dgdAnnotations: Record<string, string> = {},
  spec: Record<string, unknown> = {},
): Promise<Dpr> {
  const admin = await adminClient();
  await admin.apply(dgdObject(ns, name, dgdAnnotations), TEST_MANAGER);
  await admin.apply(dprObject(ns, name, spec), TEST_MANAGER);
  return settledDpr(ns, name, "is published", (d) => condition(d, "ServicePublished")?.status === "True");
}

/** A DGD rollout as the Dynamo operator reports it: old and new worker generations side by side. */
export async function rollout(ns: string, hashes: string[], name = "g1"): Promise<void> {
  const admin = await adminClient();
  const dgd = (await admin.get<KubeObject>(dgdRef(ns, name)))!;
  await admin.replaceStatus({
    ...dgd,
    status: {
      components: { decode: { componentKind: "Deployment", componentNames: hashes.map((x) => `${name}-decode-${x}`) } },
    },
  });
}

export function pingEvent(time = now()): CloudEvent {
  return {
    specversion: "1.0",
    id: randomUUID(),
    type: "dev.knative.sources.ping",
    source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
    time,
    datacontenttype: "application/json",
    extensions: {},
    data: { resync: true },
  };
}
