/**
 * The product on a cluster, as a user installs it: `kubectl apply -k knative/` (rendered with the
 * kubectl built beside the control plane, applied with server-side apply), then every Knative
 * object it holds reporting Ready.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";

/** The product's knative/ folder: what `kubectl apply -k knative/` installs. */
export const KNATIVE_DIR = fileURLToPath(new URL("../knative/", import.meta.url));
export const PRODUCT_NAMESPACE = "dynamo-system";

/** The objects of `kubectl kustomize knative/`. */
export function productManifests(kubectl: string, dir = KNATIVE_DIR): KubeObject[] {
  const r = spawnSync(kubectl, ["kustomize", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as KubeObject)
    .filter(Boolean);
}

/** Applies them in an order that resolves (definitions and identities first), as one field manager. */
export async function installProduct(
  admin: KubeClient,
  kubectl: string,
  fieldManager: string,
  objects = productManifests(kubectl),
): Promise<KubeObject[]> {
  const order = ["CustomResourceDefinition", "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"];
  const rank = (o: KubeObject) => (order.includes(o.kind) ? order.indexOf(o.kind) : order.length);
  const sorted = [...objects].sort((a, b) => rank(a) - rank(b));
  for (const obj of sorted) await admin.apply(obj, fieldManager, { force: true });
  return sorted;
}

interface Conditioned {
  kind: string;
  metadata: { name: string; namespace?: string; generation?: number };
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface Readiness {
  object: string;
  ready: boolean;
  detail: string;
}

const KNATIVE_GROUPS = /^(eventing|sources|serving)\.knative\.dev\//;

interface Rolled {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

/**
 * Ready=True (for the current generation) of every Knative object in the product's manifests, and
 * every replica of each of its Deployments (the event source) of the current template and available.
 */
export async function productReadiness(admin: KubeClient, objects: readonly KubeObject[]): Promise<Readiness[]> {
  const out: Readiness[] = [];
  for (const o of objects.filter((x) => x.kind === "Deployment")) {
    const live = await admin.get<Rolled>({
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata.namespace,
      name: o.metadata.name,
    });
    const s = live?.status ?? {};
    const want = live?.spec?.replicas ?? 1;
    const rolled =
      (s.observedGeneration ?? 0) >= (live?.metadata.generation ?? 1) &&
      s.updatedReplicas === want &&
      s.availableReplicas === want &&
      s.replicas === want;
    out.push({
      object: `Deployment ${o.metadata.namespace}/${o.metadata.name}`,
      ready: rolled,
      detail: !live
        ? "not found"
        : `${s.availableReplicas ?? 0} of ${want} available, ${s.updatedReplicas ?? 0} updated, ${s.replicas ?? 0} in all`,
    });
  }
  for (const o of objects.filter((x) => KNATIVE_GROUPS.test(x.apiVersion))) {
    const live = await admin.get<Conditioned>({
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata.namespace,
      name: o.metadata.name,
    });
    const ready = live?.status?.conditions?.find((c) => c.type === "Ready");
    const current =
      live?.status?.observedGeneration === undefined ||
      live.status.observedGeneration >= (live.metadata.generation ?? 0);
    out.push({
      object: `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`,
      ready: ready?.status === "True" && current,
      detail: !live
        ? "not found"
        : !ready
          ? "no Ready condition yet"
          : `Ready=${ready.status}${ready.reason ? ` ${ready.reason}` : ""}${ready.message ? `: ${ready.message}` : ""}${current ? "" : " (older generation)"}`,
    });
  }
  return out;
}

/** Waits until every object of `objects` is Ready (productReadiness); fails naming those that are not. */
export async function waitProductReady(
  admin: KubeClient,
  objects: readonly KubeObject[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const readiness = await productReadiness(admin, objects);
    if (readiness.every((r) => r.ready)) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the product's Knative objects did not go Ready within ${timeoutMs / 1000} s:\n${readiness
          .filter((r) => !r.ready)
          .map((r) => `  ${r.object}: ${r.detail}`)
          .join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The objects with each image `images` names put in place of that name (tagged or not, as knative/
 * writes it); another image is kept, or refused with `strict` (every image must be one given).
 */
export function withImages(objects: KubeObject[], images: Record<string, string>, strict = false): KubeObject[] {
  const json = JSON.stringify(objects).replaceAll(/"image":"([^":@]+)((?:[:@][^"]*)?)"/g, (whole, name: string) => {
    if (images[name]) return `"image":"${images[name]}"`;
    if (strict) throw new Error(`knative/ names the image ${name}, which is not given`);
    return whole;
  });
  return JSON.parse(json) as KubeObject[];
}
