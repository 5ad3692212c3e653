/**
 * The product on the real node: `kubectl kustomize knative/` with the images built here, and how a
 * pod's request reaches a cluster-local function: Traefik's internal Service, with its host name.
 */
import { request } from "node:http";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { productManifests, withImages } from "../product.ts";
import { knativeImage } from "./knative.ts";
import { TRAEFIK_NAMESPACE } from "./traefik.ts";

export const PRODUCT_IMAGE = "dev.local/dynamo-pool-relay:local";
/** NVIDIA Dynamo's Relay, built here from PyPI (scripts/images-build.sh). */
export const RELAY_IMAGE = "dev.local/dynamo-relay:1.6.1";
/** The Relay's default requests (1 CPU, 1 GiB a replica) do not fit a few of them beside Knative on this 2-core node. */
export const RELAY_RESOURCES = { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "1Gi" } };

/**
 * A DynamoPoolRelay as a user of this small cluster sets it: the Relay image built here in place of
 * a Dynamo runtime image (which cannot be pulled here), and requests that fit.
 */
export function relayOnNode<T extends KubeObject>(dpr: T): T {
  return { ...dpr, spec: { ...(dpr["spec"] as object), image: RELAY_IMAGE, resources: RELAY_RESOURCES } };
}
/** The images knative/kustomization.yaml names, and the images built here in their place. */
const IMAGES: Record<string, string> = {
  "dynamo-pool-relay": PRODUCT_IMAGE,
  "gcr.io/knative-releases/knative.dev/eventing/cmd/apiserver_receive_adapter": knativeImage(
    "eventing-apiserver_receive_adapter",
  ),
};

/** `kubectl kustomize knative/` with the images built here, as a user sets theirs (kustomize edit set image). */
export function productOnNode(kubectl: string): KubeObject[] {
  return withImages(productManifests(kubectl), IMAGES, true);
}

/** POSTs to a cluster-local Knative Service as a pod would after resolving its name: to Traefik's internal Service, with its Host. */
export async function postToService(
  client: KubeClient,
  host: string,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  const traefik = await client.get<{ spec: { clusterIP: string } }>({
    apiVersion: "v1",
    kind: "Service",
    namespace: TRAEFIK_NAMESPACE,
    name: "traefik-internal",
  });
  if (!traefik) throw new Error(`Service ${TRAEFIK_NAMESPACE}/traefik-internal not found`);
  return new Promise((resolve, reject) => {
    // fetch may not set Host: node:http does.
    const req = request(
      { host: traefik.spec.clusterIP, port: 80, method: "POST", path: "/", headers: { ...headers, host } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A cluster-local URL (a Broker's address) as the host reaches it: its Service's ClusterIP, which the host routes through the node. */
export async function clusterUrlFromHost(client: KubeClient, url: string): Promise<string> {
  const u = new URL(url);
  const [name, namespace] = u.hostname.split(".") as [string, string];
  const svc = await client.get<{ spec: { clusterIP: string } }>({ apiVersion: "v1", kind: "Service", namespace, name });
  if (!svc) throw new Error(`Service ${namespace}/${name} of ${url} not found`);
  u.hostname = svc.spec.clusterIP;
  return u.toString();
}
