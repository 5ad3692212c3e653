/**
 * Traefik v3.6 as Knative Serving's KIngress, with its experimental Knative provider (the one
 * ingress that runs without Envoy; see docs/limits.md). The provider routes each KIngress of
 * class traefik.ingress.networking.knative.dev to the backend Service's ClusterIP with the split's
 * Knative headers, and writes the KIngress status: Knative then points a Route's Service
 * (ExternalName) at `traefik-internal`, port 80. Only cluster-local visibility is served (the
 * product's functions are cluster-local). The RBAC is the provider's own, as its docs ship it.
 */
import type { KubeObject } from "../../shared/kube/client.ts";
import { knativeImage } from "./knative.ts";

export const TRAEFIK_NAMESPACE = "traefik";
const LABELS = { app: "traefik" };

export function traefikObjects(): KubeObject[] {
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: TRAEFIK_NAMESPACE } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "traefik", namespace: TRAEFIK_NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "traefik-knative" },
      rules: [
        { apiGroups: [""], resources: ["services", "secrets"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["networking.internal.knative.dev"], resources: ["ingresses"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["networking.internal.knative.dev"], resources: ["ingresses/status"], verbs: ["update"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "traefik-knative" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "traefik-knative" },
      subjects: [{ kind: "ServiceAccount", name: "traefik", namespace: TRAEFIK_NAMESPACE }],
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "traefik", namespace: TRAEFIK_NAMESPACE, labels: LABELS },
      spec: {
        replicas: 1,
        selector: { matchLabels: LABELS },
        template: {
          metadata: { labels: LABELS },
          spec: {
            serviceAccountName: "traefik",
            containers: [
              {
                name: "traefik",
                image: knativeImage("traefik"),
                args: [
                  "--experimental.knative=true",
                  "--entryPoints.web-internal.address=:8082",
                  // The functions' invocations run up to their Knative timeoutSeconds (120 s at most).
                  "--entryPoints.web-internal.transport.respondingTimeouts.readTimeout=300s",
                  "--providers.knative.privateEntrypoints=web-internal",
                  "--providers.knative.privateService.name=traefik-internal",
                  `--providers.knative.privateService.namespace=${TRAEFIK_NAMESPACE}`,
                  // At least the providers' throttle: the status is written after the routes apply.
                  "--providers.knative.throttleDuration=2s",
                  "--ping=true",
                  "--ping.entryPoint=ping",
                  "--entryPoints.ping.address=:8083",
                  "--log.level=INFO",
                ],
                ports: [
                  { name: "web-internal", containerPort: 8082 },
                  { name: "ping", containerPort: 8083 },
                ],
                readinessProbe: { httpGet: { path: "/ping", port: 8083 }, periodSeconds: 2 },
                resources: { requests: { cpu: "20m", memory: "64Mi" }, limits: { memory: "256Mi" } },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ["ALL"] },
                },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "traefik-internal", namespace: TRAEFIK_NAMESPACE, labels: LABELS },
      spec: { selector: LABELS, ports: [{ name: "http", port: 80, targetPort: 8082 }] },
    },
  ];
}
