/**
 * The Relay Deployment: `replicas` active Relays in file mode, reading the sources document from
 * the mounted ConfigMap and serving gRPC on 5561. The pod template carries the connection revision
 * and nothing that changes with worker namespaces, so a DGD rollout never restarts the Relays.
 */
import type { Decision } from "../decide.ts";
import {
  CONTAINER_NAME,
  DISCOVERY_LABELS,
  GRPC_PORT,
  GRPC_SERVICE,
  SINK_BINDING_EXCLUDE,
  SOURCES_DIR,
  SOURCES_PATH,
  SYSTEM_PORT,
  childName,
  commonLabels,
  selectorLabels,
} from "../names.ts";
import {
  ENV_CONNECTION_REVISION,
  ENV_DC_ID,
  ENV_DISCOVERY_BACKEND,
  ENV_DISCOVERY_MODE,
  ENV_NAMESPACE,
  ENV_POD_NAME,
  ENV_POD_NAMESPACE,
  ENV_POD_UID,
  ENV_SYSTEM_PORT,
} from "../relay-env.ts";
import { baseNamespace } from "../worker-namespaces.ts";
import { childMeta } from "./metadata.ts";

/** The Relay's deployment guide: requests cpu 1 / memory 1Gi, limit memory 4Gi. */
export const DEFAULT_RESOURCES = { requests: { cpu: "1", memory: "1Gi" }, limits: { memory: "4Gi" } };
/** A new incarnation must come up before an old one goes, so the listener never disappears. */
const ROLLING_UPDATE = { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
const UID = 1000;

function fieldRef(name: string, fieldPath: string) {
  return { name, valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } };
}

/**
 * The Relay's own runtime namespace. Not `<base>-…`: frontends find workers by the `<base>`
 * prefix and must never take the Relay for one.
 */
export function relayRuntimeNamespace(namespace: string, dgdName: string): string {
  return `pool-relay-${baseNamespace(namespace, dgdName)}`;
}

function spreadAcrossNodes(dgdName: string) {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: "kubernetes.io/hostname",
            labelSelector: { matchLabels: selectorLabels(dgdName) },
          },
        },
      ],
    },
  };
}

export function renderDeployment(decision: Extract<Decision, { action: "apply" }>) {
  const { dpr } = decision;
  const { spec } = dpr;
  const meta = childMeta(dpr, SINK_BINDING_EXCLUDE);
  const env = [
    { name: ENV_DC_ID, value: spec.clusterID },
    { name: ENV_CONNECTION_REVISION, value: decision.connectionRevision },
    { name: ENV_DISCOVERY_BACKEND, value: "kubernetes" },
    { name: ENV_DISCOVERY_MODE, value: "pod" },
    { name: ENV_NAMESPACE, value: relayRuntimeNamespace(meta.namespace, dpr.metadata.name) },
    { name: ENV_SYSTEM_PORT, value: String(SYSTEM_PORT) },
    fieldRef(ENV_POD_NAME, "metadata.name"),
    fieldRef(ENV_POD_NAMESPACE, "metadata.namespace"),
    fieldRef(ENV_POD_UID, "metadata.uid"),
    ...(spec.env ?? []),
  ];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta,
    spec: {
      replicas: spec.replicas,
      revisionHistoryLimit: 3,
      selector: { matchLabels: selectorLabels(dpr.metadata.name) },
      strategy: ROLLING_UPDATE,
      template: {
        metadata: { labels: { ...commonLabels(dpr.metadata.name), ...DISCOVERY_LABELS } },
        spec: {
          serviceAccountName: childName(dpr.metadata.name),
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 60,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: UID,
            runAsGroup: UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          ...(spec.imagePullSecrets ? { imagePullSecrets: spec.imagePullSecrets.map((s) => ({ name: s.name })) } : {}),
          ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
          ...(spec.tolerations ? { tolerations: spec.tolerations } : {}),
          ...(spec.priorityClassName ? { priorityClassName: spec.priorityClassName } : {}),
          affinity: spec.affinity ?? spreadAcrossNodes(dpr.metadata.name),
          containers: [
            {
              name: CONTAINER_NAME,
              image: spec.image,
              ...(spec.imagePullPolicy ? { imagePullPolicy: spec.imagePullPolicy } : {}),
              command: [...decision.relayCommand],
              args: ["--bind", `0.0.0.0:${GRPC_PORT}`, "--sources-file", SOURCES_PATH],
              env,
              ports: [
                { name: "grpc", containerPort: GRPC_PORT, protocol: "TCP" },
                { name: "system", containerPort: SYSTEM_PORT, protocol: "TCP" },
              ],
              startupProbe: {
                grpc: { port: GRPC_PORT, service: GRPC_SERVICE },
                periodSeconds: 5,
                failureThreshold: 60,
              },
              readinessProbe: { grpc: { port: GRPC_PORT, service: GRPC_SERVICE }, periodSeconds: 10 },
              livenessProbe: { grpc: { port: GRPC_PORT }, periodSeconds: 20, failureThreshold: 3 },
              resources: spec.resources ?? DEFAULT_RESOURCES,
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
              volumeMounts: [{ name: "sources", mountPath: SOURCES_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: "sources", configMap: { name: childName(dpr.metadata.name) } }],
        },
      },
    },
  };
}
