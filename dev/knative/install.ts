/**
 * Knative Eventing's own manifests, as the build copied them from the eventing and serving modules'
 * config/ folders: the CRDs, and what the data plane needs in namespace knative-eventing (its
 * ConfigMaps, ServiceAccounts and RBAC, and the Deployments and Services of the broker ingress and
 * filter, the InMemoryChannel dispatcher and the PingSource adapter). The control-plane Deployments
 * (controllers, webhook) are not applied: their reconcilers run as one host process instead.
 */
import { join, relative } from "node:path";
import type { KubeObject } from "../../shared/kube/client.ts";
import { readObjects, yamlFiles } from "../yaml.ts";
import { resolveEnv, type EnvVar, type PodFacts } from "./pod-env.ts";

export const SYSTEM_NAMESPACE = "knative-eventing";

/** Data-plane Deployments (and their Services) the local kubelet runs. */
export const DATA_PLANE = ["mt-broker-ingress", "mt-broker-filter", "imc-dispatcher", "pingsource-mt-adapter"] as const;
const DATA_PLANE_SERVICES = new Set(["broker-ingress", "broker-filter", "imc-dispatcher"]);
const INSTALLED_KINDS = new Set(["Namespace", "ConfigMap", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

function objectsUnder(config: string, ...dirs: string[]): { file: string; obj: KubeObject }[] {
  return dirs.flatMap((d) => yamlFiles(join(config, d)).flatMap((file) => readObjects(file).filter(Boolean).map((obj) => ({ file: relative(config, file), obj }))));
}

/**
 * The CRDs: every eventing resource, the InMemoryChannel and Knative Serving's Service (the
 * product's functions are Knative Services). Without the eventing webhook, CRDs that name it as
 * their conversion webhook get `strategy: None` (only one version of each is used here).
 */
export function knativeCrds(configDir: string): KubeObject[] {
  const eventing = join(configDir, "eventing");
  const serving = join(configDir, "serving");
  const crds = [
    ...objectsUnder(eventing, "core/resources", "channels/in-memory-channel/resources").map((o) => o.obj),
    ...readObjects(join(serving, "core/300-resources/service.yaml")),
  ].filter((o) => o?.kind === "CustomResourceDefinition");
  return crds.map((crd) => {
    const spec = crd["spec"] as { conversion?: { strategy?: string } };
    return spec.conversion?.strategy === "Webhook" ? { ...crd, spec: { ...spec, conversion: { strategy: "None" } } } : crd;
  });
}

/** What the data plane needs, in an order that applies cleanly (namespace and identities first). */
export function knativeObjects(configDir: string): KubeObject[] {
  const eventing = join(configDir, "eventing");
  const found = objectsUnder(eventing, "core", "brokers/mt-channel-broker", "channels/in-memory-channel")
    .filter(({ file }) => !file.includes("/webhooks/") && !file.includes("/resources/"))
    .map(({ obj }) => obj)
    .filter((o) =>
      INSTALLED_KINDS.has(o.kind) ||
      (o.kind === "Deployment" && (DATA_PLANE as readonly string[]).includes(o.metadata.name)) ||
      (o.kind === "Service" && DATA_PLANE_SERVICES.has(o.metadata.name)));
  const rank = (o: KubeObject) => ["Namespace", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding", "ConfigMap", "Service", "Deployment"].indexOf(o.kind);
  return found.sort((a, b) => rank(a) - rank(b));
}

interface DeploymentDoc {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { env?: EnvVar[] }[] } } };
}

/**
 * The environment Knative gives its controllers, merged from the Deployments of eventing-controller,
 * mt-broker-controller and imc-controller (literal values and pod fields; the ConfigMap-sourced
 * image variables serve integrations this product does not use).
 */
export function controllerEnv(configDir: string): Record<string, string> {
  const eventing = join(configDir, "eventing");
  const files = ["core/deployments/controller.yaml", "brokers/mt-channel-broker/deployments/controller.yaml", "channels/in-memory-channel/deployments/controller.yaml"];
  const pod: PodFacts = {
    name: "eventing-controllers-local", namespace: SYSTEM_NAMESPACE, uid: "", serviceAccountName: "eventing-controller",
    nodeName: "localhost", podIP: "127.0.0.1", labels: {}, annotations: {},
  };
  const env: Record<string, string> = {};
  for (const file of files) {
    const deployment = readObjects(join(eventing, file)).find((o) => o?.kind === "Deployment") as unknown as DeploymentDoc | undefined;
    if (!deployment) throw new Error(`${file} in the Knative config holds no Deployment`);
    const vars = deployment.spec.template.spec.containers[0]?.env?.filter((v) => !v.valueFrom?.configMapKeyRef && !v.valueFrom?.secretKeyRef);
    const resolved = resolveEnv(vars, pod, () => undefined);
    if (resolved.errors.length) throw new Error(`${file}: ${resolved.errors.join("; ")}`);
    Object.assign(env, resolved.env);
  }
  return env;
}
