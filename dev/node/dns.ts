/**
 * Cluster DNS for the local node: CoreDNS as a pod (the image scripts/images-build.sh makes), with
 * CoreDNS's own RBAC, answering for cluster.local only. Nothing is forwarded: a name outside the
 * cluster gets no answer, as nothing here may leave the machine. It listens on 1053 as a non-root
 * user; the kube-dns Service maps port 53 to it.
 */
import type { KubeObject } from "../../shared/kube/client.ts";
import type { NodePlan } from "./config.ts";

const NS = "kube-system";
const LABELS = { "k8s-app": "kube-dns" };

const COREFILE = `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loop
}
`;

export function coreDnsObjects(plan: NodePlan): KubeObject[] {
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: NS } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: NS }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "coredns", namespace: NS }, data: { Corefile: COREFILE } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: NS, labels: LABELS },
      spec: {
        replicas: 1,
        selector: { matchLabels: LABELS },
        template: {
          metadata: { labels: LABELS },
          spec: {
            serviceAccountName: "coredns",
            priorityClassName: "system-cluster-critical",
            // Its own resolver is the cluster's: it must not ask itself.
            dnsPolicy: "Default",
            containers: [
              {
                name: "coredns",
                image: "dev.local/coredns:local",
                imagePullPolicy: "Never",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 1053, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 1053, protocol: "TCP" },
                ],
                resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "128Mi" } },
                securityContext: {
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ["ALL"] },
                },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
                livenessProbe: { httpGet: { path: "/health", port: 8080 }, initialDelaySeconds: 10, periodSeconds: 10 },
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: NS, labels: LABELS },
      spec: {
        clusterIP: plan.dnsIP,
        selector: LABELS,
        ports: [
          { name: "dns", port: 53, targetPort: 1053, protocol: "UDP" },
          { name: "dns-tcp", port: 53, targetPort: 1053, protocol: "TCP" },
        ],
      },
    },
  ];
}
