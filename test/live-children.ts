// The six children of DynamoPoolRelay team-a/g1 as the API server returns them after the product
// applied them: what was sent, plus what the server adds (uid, resourceVersion, generation,
// creationTimestamp, managedFields, defaulted fields, status) and with quantities in its canonical
// form. Written out by hand, never cloned from a rendered object, so a test comparing the rendered
// children with these compares what the product wants with what a real server holds.
import { APPLIED_HASH, type LiveObject } from "../shared/apply-plan.ts";
import type { KubeObject } from "../shared/render/index.ts";

export interface LiveInput {
  /** The DynamoPoolRelay's UID, in each child's controller reference. */
  dprUid: string;
  clusterID: string;
  /** The decision's connection revision and sources document, which the server stores as sent. */
  connectionRevision: string;
  sourcesText: string;
  /** The applied-hash annotation the product sent with each kind; the server keeps it verbatim. */
  appliedHash: Readonly<Record<string, string>>;
  /** The container's resources as the server holds them; the product's defaults unless given. */
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  /** The Deployment's status; none yet (the controller has not acted) unless given. */
  deploymentStatus?: Record<string, unknown>;
}

/**
 * The applied-hash annotation of each child the product sent, by kind: an opaque value the server
 * stores and returns as it got it, so it is the one thing taken from the rendered children.
 */
export function appliedHashes(sent: readonly KubeObject[]): Record<string, string> {
  return Object.fromEntries(
    sent.map((c) => [
      c.kind,
      (c.metadata as { annotations?: Record<string, string> }).annotations?.[APPLIED_HASH] ?? "",
    ]),
  );
}

const CREATED = "2026-01-01T00:00:00Z";
/** The labels every child of DynamoPoolRelay team-a/g1 carries, written out (the renderer's tests compare with them too). */
export const LABELS = {
  "app.kubernetes.io/name": "dynamo-pool-relay",
  "app.kubernetes.io/instance": "g1",
  "app.kubernetes.io/component": "pool-relay",
  "app.kubernetes.io/managed-by": "dynamo-pool-relay",
  "app.kubernetes.io/part-of": "dynamo",
  "nvidia.com/dynamo-graph-deployment-name": "g1",
};
/** The discovery labels of the Relay pods. */
export const DISCOVERY = {
  "nvidia.com/dynamo-discovery-backend": "kubernetes",
  "nvidia.com/dynamo-discovery-enabled": "true",
};
/** The Relay pods' selector. */
export const SELECTOR = { "app.kubernetes.io/name": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" };

function metadata(
  input: LiveInput,
  kind: string,
  apiVersion: string,
  n: number,
  fieldsV1: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const labels = (extra["labels"] as Record<string, string> | undefined) ?? LABELS;
  return {
    name: "g1-pool-relay",
    namespace: "team-a",
    uid: `0000000${n}-aaaa-bbbb-cccc-dddddddddddd`,
    resourceVersion: String(100 + n),
    creationTimestamp: CREATED,
    ...extra,
    labels,
    annotations: {
      [APPLIED_HASH]: input.appliedHash[kind]!,
      ...((extra["annotations"] as Record<string, string> | undefined) ?? {}),
    },
    ownerReferences: [
      {
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        name: "g1",
        uid: input.dprUid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: [
      {
        manager: "dynamo-pool-relay/apply",
        operation: "Apply",
        apiVersion,
        time: CREATED,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": {
            "f:annotations": { [`f:${APPLIED_HASH}`]: {} },
            "f:labels": Object.fromEntries(Object.keys(labels).map((k) => [`f:${k}`, {}])),
            "f:ownerReferences": { [`k:{"uid":"${input.dprUid}"}`]: {} },
          },
          ...fieldsV1,
        },
      },
    ],
  };
}

const fieldRef = (name: string, fieldPath: string) => ({
  name,
  valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } },
});

export function liveChildren(
  input: LiveInput,
): Record<"ServiceAccount" | "Role" | "RoleBinding" | "ConfigMap" | "Deployment" | "Service", LiveObject> {
  const grpc = { port: 5561, service: "dynamo.kvrelay.v1.KvEventRelay" };
  // A copy, so a case that edits one (an edit by someone else) changes no other case's objects.
  const children = structuredClone({
    ServiceAccount: {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: metadata(input, "ServiceAccount", "v1", 1, {}),
    },
    Role: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: metadata(input, "Role", "rbac.authorization.k8s.io/v1", 2, { "f:rules": {} }),
      rules: [
        {
          apiGroups: ["nvidia.com"],
          resources: ["dynamoworkermetadatas"],
          verbs: ["get", "list", "watch", "create", "patch", "delete"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      ],
    },
    RoleBinding: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: metadata(input, "RoleBinding", "rbac.authorization.k8s.io/v1", 3, {
        "f:roleRef": {},
        "f:subjects": {},
      }),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "g1-pool-relay" },
      subjects: [{ kind: "ServiceAccount", name: "g1-pool-relay", namespace: "team-a" }],
    },
    ConfigMap: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: metadata(input, "ConfigMap", "v1", 4, { "f:data": { "f:sources.json": {} } }),
      data: { "sources.json": input.sourcesText },
    },
    Deployment: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: metadata(
        input,
        "Deployment",
        "apps/v1",
        5,
        { "f:spec": { "f:replicas": {}, "f:selector": {}, "f:strategy": {}, "f:template": {} } },
        {
          generation: 1,
          labels: { ...LABELS, "bindings.knative.dev/exclude": "true" },
          annotations: { "deployment.kubernetes.io/revision": "1" },
        },
      ),
      spec: {
        replicas: 2,
        selector: { matchLabels: SELECTOR },
        template: {
          metadata: { creationTimestamp: null, labels: { ...LABELS, ...DISCOVERY } },
          spec: {
            containers: [
              {
                name: "relay",
                image: "relay:1",
                command: ["python3", "-m", "dynamo.kv_dc_relay"],
                args: ["--bind", "0.0.0.0:5561", "--sources-file", "/etc/pool-relay/sources.json"],
                env: [
                  { name: "DYN_DC_ID", value: input.clusterID },
                  { name: "DYN_RELAY_CONNECTION_REVISION", value: input.connectionRevision },
                  { name: "DYN_DISCOVERY_BACKEND", value: "kubernetes" },
                  { name: "DYN_KUBE_DISCOVERY_MODE", value: "pod" },
                  { name: "DYN_NAMESPACE", value: "pool-relay-team-a-g1" },
                  { name: "DYN_SYSTEM_PORT", value: "8081" },
                  fieldRef("POD_NAME", "metadata.name"),
                  fieldRef("POD_NAMESPACE", "metadata.namespace"),
                  fieldRef("POD_UID", "metadata.uid"),
                ],
                ports: [
                  { name: "grpc", containerPort: 5561, protocol: "TCP" },
                  { name: "system", containerPort: 8081, protocol: "TCP" },
                ],
                resources: input.resources ?? { limits: { memory: "4Gi" }, requests: { cpu: "1", memory: "1Gi" } },
                // The server's probe defaults: timeout 1 s, success 1, failure 3, an empty gRPC service.
                startupProbe: { grpc, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 60 },
                readinessProbe: {
                  grpc,
                  timeoutSeconds: 1,
                  periodSeconds: 10,
                  successThreshold: 1,
                  failureThreshold: 3,
                },
                livenessProbe: {
                  grpc: { port: 5561, service: "" },
                  timeoutSeconds: 1,
                  periodSeconds: 20,
                  successThreshold: 1,
                  failureThreshold: 3,
                },
                volumeMounts: [{ name: "sources", readOnly: true, mountPath: "/etc/pool-relay" }],
                terminationMessagePath: "/dev/termination-log",
                terminationMessagePolicy: "File",
                imagePullPolicy: "IfNotPresent",
                securityContext: { capabilities: { drop: ["ALL"] }, allowPrivilegeEscalation: false },
              },
            ],
            volumes: [{ name: "sources", configMap: { name: "g1-pool-relay", defaultMode: 420 } }],
            restartPolicy: "Always",
            terminationGracePeriodSeconds: 60,
            dnsPolicy: "ClusterFirst",
            serviceAccountName: "g1-pool-relay",
            serviceAccount: "g1-pool-relay",
            securityContext: {
              runAsUser: 1000,
              runAsGroup: 1000,
              runAsNonRoot: true,
              seccompProfile: { type: "RuntimeDefault" },
            },
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: {
                      labelSelector: { matchLabels: SELECTOR },
                      topologyKey: "kubernetes.io/hostname",
                    },
                  },
                ],
              },
            },
            schedulerName: "default-scheduler",
            enableServiceLinks: false,
          },
        },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
        revisionHistoryLimit: 3,
        progressDeadlineSeconds: 600,
      },
      status: input.deploymentStatus ?? {},
    },
    Service: {
      apiVersion: "v1",
      kind: "Service",
      metadata: metadata(
        input,
        "Service",
        "v1",
        6,
        { "f:spec": { "f:ports": {}, "f:publishNotReadyAddresses": {}, "f:selector": {}, "f:type": {} } },
        {
          labels: { ...LABELS, ...DISCOVERY },
        },
      ),
      spec: {
        // publishNotReadyAddresses: false is a zero value the server leaves out.
        ports: [{ name: "grpc", protocol: "TCP", appProtocol: "kubernetes.io/h2c", port: 5561, targetPort: "grpc" }],
        selector: SELECTOR,
        clusterIP: "10.96.41.7",
        clusterIPs: ["10.96.41.7"],
        type: "ClusterIP",
        sessionAffinity: "None",
        ipFamilies: ["IPv4"],
        ipFamilyPolicy: "SingleStack",
        internalTrafficPolicy: "Cluster",
      },
      status: { loadBalancer: {} },
    },
  });
  // The Deployment controller writes the status it is given, after the product's apply.
  if (input.deploymentStatus) (children.Deployment.metadata.managedFields as object[]).push(CONTROLLER_STATUS);
  return children;
}

const CONTROLLER_STATUS = {
  manager: "kube-controller-manager",
  operation: "Update",
  subresource: "status",
  apiVersion: "apps/v1",
  time: "2026-01-01T00:00:07Z",
  fieldsType: "FieldsV1",
  fieldsV1: { "f:status": { "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {} } },
};
