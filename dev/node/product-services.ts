/**
 * The product's Knative Services on the real node: what they need of `kubectl kustomize knative/`
 * (identities and the Services, with the image built here), and how a pod's request reaches a
 * cluster-local function: Traefik's internal Service, with the function's host name.
 */
import { request } from "node:http";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { productManifests } from "../product.ts";
import { TRAEFIK_NAMESPACE } from "./traefik.ts";

export const PRODUCT_IMAGE = "dev.local/dynamo-pool-relay:local";
const IDENTITY_KINDS = new Set(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);

export function productServices(kubectl: string): KubeObject[] {
  const objects = productManifests(kubectl);
  const services = objects.filter((o) => o.apiVersion === "serving.knative.dev/v1" && o.kind === "Service");
  const json = JSON.stringify(services).replaceAll(/"image":"dynamo-pool-relay(:[^"]*)?"/g, `"image":"${PRODUCT_IMAGE}"`);
  return [...objects.filter((o) => IDENTITY_KINDS.has(o.kind)), ...(JSON.parse(json) as KubeObject[])];
}

/** POSTs to a cluster-local Knative Service as a pod would after resolving its name: to Traefik's internal Service, with its Host. */
export async function postToService(client: KubeClient, host: string, headers: Record<string, string>, body: string): Promise<number> {
  const traefik = await client.get<{ spec: { clusterIP: string } }>({ apiVersion: "v1", kind: "Service", namespace: TRAEFIK_NAMESPACE, name: "traefik-internal" });
  if (!traefik) throw new Error(`Service ${TRAEFIK_NAMESPACE}/traefik-internal not found`);
  return new Promise((resolve, reject) => {
    // fetch may not set Host: node:http does.
    const req = request({ host: traefik.spec.clusterIP, port: 80, method: "POST", path: "/", headers: { ...headers, host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}
