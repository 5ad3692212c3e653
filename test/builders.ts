// Small builders for test inputs, so each table case states only what it is about.
import { printerColumns } from "../shared/api/columns.ts";
import type { DynamoGraphDeployment } from "../shared/api/dynamo-graph-deployment.ts";
import type { DynamoPoolRelay } from "../shared/api/dynamo-pool-relay.ts";

export interface ComponentOptions {
  name: string;
  type?: string;
  annotations?: Record<string, string>;
  global?: boolean;
}

export function dgd(
  options: {
    name?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    components?: ComponentOptions[];
    componentNames?: Record<string, string[]>;
    deleting?: boolean;
  } = {},
): DynamoGraphDeployment {
  const components = options.components ?? [{ name: "decode", type: "worker" }];
  return {
    apiVersion: "nvidia.com/v1beta1",
    kind: "DynamoGraphDeployment",
    metadata: {
      name: options.name ?? "g1",
      namespace: options.namespace ?? "team-a",
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: {
      components: components.map((c) => ({
        name: c.name,
        ...(c.type ? { type: c.type } : {}),
        ...(c.global ? { globalDynamoNamespace: true } : {}),
        ...(c.annotations ? { podTemplate: { metadata: { annotations: c.annotations } } } : {}),
      })),
    },
    ...(options.componentNames
      ? {
          status: {
            components: Object.fromEntries(
              Object.entries(options.componentNames).map(([k, v]) => [k, { componentNames: v }]),
            ),
          },
        }
      : {}),
  };
}

/** The same components in the deprecated v1alpha1 map shape. */
export function dgdV1alpha1(options: Parameters<typeof dgd>[0] = {}): DynamoGraphDeployment {
  const beta = dgd(options);
  const { components, ...spec } = beta.spec!;
  return {
    ...beta,
    apiVersion: "nvidia.com/v1alpha1",
    spec: {
      ...spec,
      services: Object.fromEntries(
        (components ?? []).map((c) => [
          c.name,
          {
            ...(c.type ? { componentType: c.type } : {}),
            ...(c.globalDynamoNamespace ? { globalDynamoNamespace: true } : {}),
            ...(c.podTemplate?.metadata?.annotations ? { annotations: c.podTemplate.metadata.annotations } : {}),
          },
        ]),
      ),
    },
  };
}

export function dpr(
  options: {
    name?: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    spec?: Partial<DynamoPoolRelay["spec"]>;
  } = {},
): DynamoPoolRelay {
  return {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: {
      name: options.name ?? "g1",
      namespace: options.namespace ?? "team-a",
      uid: options.uid ?? "11111111-2222-3333-4444-555555555555",
      generation: options.generation ?? 1,
    },
    spec: { image: "relay:1", clusterID: "dc-1", replicas: 2, ...options.spec },
  };
}

interface Listed {
  metadata: { namespace?: string; name: string; generation?: number };
  status?: {
    observedGeneration?: number;
    readyOfDesired?: string;
    serviceEndpoint?: string;
    conditions?: { type: string; status?: string; reason?: string }[];
  };
}

/**
 * DynamoPoolRelays as the API server answers a LIST of them as a Table with `includeObject=None`:
 * Name, then one cell per printer column of the CRD, null where its JSONPath finds nothing.
 */
export function dprTable(objects: readonly Listed[]) {
  const ready = (o: Listed) => o.status?.conditions?.find((c) => c.type === "Ready");
  const cells = (o: Listed): Record<string, unknown> => ({
    Name: o.metadata.name,
    Ready: ready(o)?.status ?? null,
    Replicas: o.status?.readyOfDesired ?? null,
    Endpoint: o.status?.serviceEndpoint ?? null,
    Reason: ready(o)?.reason ?? null,
    Generation: o.metadata.generation ?? null,
    Observed: o.status?.observedGeneration ?? null,
    Namespace: o.metadata.namespace ?? null,
    Age: "1m",
  });
  const names = ["Name", ...printerColumns().map((c) => c.name)];
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: {},
    columnDefinitions: names.map((name) => ({ name })),
    rows: objects.map((o) => ({ cells: names.map((n) => cells(o)[n]) })),
  };
}
