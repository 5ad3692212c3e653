/**
 * Knative Serving v0.50.0 on the real node, as Knative ships it: every object of serving's
 * config/core and the networking and caching CRDs, from the Go module cache (control-plane-build.sh
 * knative copies them), with only what a cluster operator changes: the images (ko:// references
 * become the images scripts/images-build.sh makes), CPU requests small enough for a 2-core node,
 * and the KIngress class (Traefik, see traefik.ts). The HPAs of the activator and the webhook are
 * left out (no metrics server here). Webhook configurations go last, once the webhook serves.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { KubeObject } from "../../shared/kube/client.ts";
import { readObjects } from "../yaml.ts";

export const SERVING_NAMESPACE = "knative-serving";
export const TRAEFIK_INGRESS_CLASS = "traefik.ingress.networking.knative.dev";
/** The image scripts/images-build.sh makes of a Knative (or Traefik) program. */
export const knativeImage = (name: string) => `dev.local/knative/${name}:local`;

const WEBHOOK_KINDS = new Set(["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);
const ORDER = ["Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding", "ConfigMap", "Secret", "Service", "Deployment", "Image"];

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? yamlFiles(path) : entry.endsWith(".yaml") ? [path] : [];
  }).sort();
}

/** Replaces every ko:// reference in an object with the local image of the same program. */
function localImages<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/ko:\/\/knative\.dev\/serving\/cmd\/([a-z-]+)/g, (_, name: string) => knativeImage(name))) as T;
}

interface PodTemplate {
  spec: { template: { spec: { containers: { resources?: { requests?: Record<string, string> } }[] } } };
}

/** CPU requests of 20m: Knative asks 100m to 300m a component, which a 2-core node cannot give to all. */
function smallRequests(obj: KubeObject): KubeObject {
  if (obj.kind !== "Deployment") return obj;
  const spec = (obj as unknown as PodTemplate).spec;
  for (const c of spec.template.spec.containers) if (c.resources?.requests?.["cpu"]) c.resources.requests["cpu"] = "20m";
  return obj;
}

/** Settings a cluster operator sets in Knative's ConfigMaps (merged over what Knative ships). */
export const SERVING_SETTINGS: Record<string, Record<string, string>> = {
  "config-network": { "ingress-class": TRAEFIK_INGRESS_CLASS },
};

function configured(obj: KubeObject): KubeObject {
  const settings = obj.kind === "ConfigMap" ? SERVING_SETTINGS[obj.metadata.name] : undefined;
  return settings ? { ...obj, data: { ...(obj["data"] as Record<string, string> | undefined), ...settings } } : obj;
}

/** Serving's objects, split into what applies first and the webhook configurations. */
export function servingObjects(configDir: string): { objects: KubeObject[]; webhooks: KubeObject[] } {
  const files = [
    ...yamlFiles(join(configDir, "serving/core")).filter((f) => !f.endsWith("-hpa.yaml")),
    ...yamlFiles(join(configDir, "networking")),
    ...yamlFiles(join(configDir, "caching")),
  ];
  const seen = new Map<string, KubeObject>();
  for (const file of files) {
    for (const obj of readObjects(file)) {
      if (!obj) continue;
      seen.set(`${obj.kind}/${obj.metadata.namespace ?? ""}/${obj.metadata.name}`, smallRequests(configured(localImages(obj))));
    }
  }
  const all = [...seen.values()];
  const rank = (o: KubeObject) => (ORDER.includes(o.kind) ? ORDER.indexOf(o.kind) : ORDER.length);
  return {
    objects: all.filter((o) => !WEBHOOK_KINDS.has(o.kind)).sort((a, b) => rank(a) - rank(b)),
    webhooks: all.filter((o) => WEBHOOK_KINDS.has(o.kind)),
  };
}
