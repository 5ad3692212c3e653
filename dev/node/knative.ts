/**
 * Knative Serving and Eventing v0.50.0 on the real node, as Knative ships them, from the Go module
 * cache (control-plane-build.sh knative copies their config/): Serving's core with the networking
 * and caching CRDs; Eventing's core, the InMemoryChannel and the MT channel-based Broker. Only what
 * a cluster operator changes is changed: the images (ko:// references become the images
 * scripts/images-build.sh makes), CPU requests small enough for a 2-core node, and the KIngress
 * class (Traefik, see traefik.ts). Left out: the HPAs (no metrics server here), and Eventing's
 * JobSink and RequestReply Deployments (features the product does not use). Webhook
 * configurations go last, once the webhooks serve.
 */
import { join } from "node:path";
import type { KubeObject } from "../../shared/kube/client.ts";
import { readObjects, yamlFiles } from "../yaml.ts";

export const SERVING_NAMESPACE = "knative-serving";
export const EVENTING_NAMESPACE = "knative-eventing";
export const TRAEFIK_INGRESS_CLASS = "traefik.ingress.networking.knative.dev";
/** The image scripts/images-build.sh makes of a Knative (or Traefik) program. */
export const knativeImage = (name: string) => `dev.local/knative/${name}:local`;

const WEBHOOK_KINDS = new Set(["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);
const ORDER = [
  "Namespace",
  "CustomResourceDefinition",
  "ServiceAccount",
  "ClusterRole",
  "Role",
  "ClusterRoleBinding",
  "RoleBinding",
  "ConfigMap",
  "Secret",
  "Service",
  "Deployment",
  "Image",
];

/** Replaces every ko:// reference in an object with the local image of the same program (Eventing's named eventing-NAME). */
function localImages<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/ko:\/\/knative\.dev\/serving\/cmd\/([a-z_-]+)/g, (_, name: string) => knativeImage(name))
      .replace(/ko:\/\/knative\.dev\/eventing\/cmd\/(?:[a-z_-]+\/)*([a-z_-]+)/g, (_, name: string) =>
        knativeImage(`eventing-${name}`),
      ),
  ) as T;
}

interface PodTemplate {
  spec: { template: { spec: { containers: { resources?: { requests?: Record<string, string> } }[] } } };
}

/** CPU requests of 20m: Knative asks 100m to 300m a component, which a 2-core node cannot give to all. */
function smallRequests(obj: KubeObject): KubeObject {
  if (obj.kind !== "Deployment") return obj;
  const spec = (obj as unknown as PodTemplate).spec;
  for (const c of spec.template.spec.containers)
    if (c.resources?.requests?.["cpu"]) c.resources.requests["cpu"] = "20m";
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

const LEFT_OUT = /(-hpa|\/hpa|\/job-sink|\/request-reply)\.yaml$/;

/** Serving's and Eventing's objects, split into what applies first and the webhook configurations. */
export function knativeObjects(configDir: string): { objects: KubeObject[]; webhooks: KubeObject[] } {
  const files = [
    ...yamlFiles(join(configDir, "serving/core")),
    ...yamlFiles(join(configDir, "networking")),
    ...yamlFiles(join(configDir, "caching")),
    ...yamlFiles(join(configDir, "eventing/core")),
    ...yamlFiles(join(configDir, "eventing/channels/in-memory-channel")),
    ...yamlFiles(join(configDir, "eventing/brokers/mt-channel-broker")),
    ...yamlFiles(join(configDir, "eventing-integrations")),
  ].filter((f) => !LEFT_OUT.test(f));
  const seen = new Map<string, KubeObject>();
  for (const file of files) {
    for (const obj of readObjects(file)) {
      if (!obj) continue;
      seen.set(
        `${obj.kind}/${obj.metadata.namespace ?? ""}/${obj.metadata.name}`,
        smallRequests(configured(localImages(obj))),
      );
    }
  }
  const all = [...seen.values()];
  const rank = (o: KubeObject) => (ORDER.includes(o.kind) ? ORDER.indexOf(o.kind) : ORDER.length);
  return {
    objects: all.filter((o) => !WEBHOOK_KINDS.has(o.kind)).sort((a, b) => rank(a) - rank(b)),
    webhooks: all.filter((o) => WEBHOOK_KINDS.has(o.kind)),
  };
}
