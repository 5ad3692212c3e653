/**
 * Where this host sends what a pod sends to a Knative object (a Broker, a Knative Service): the
 * object's address, its host name resolved by hand as cluster DNS resolves it for a pod, to a
 * Service's ClusterIP (which the host routes through the node), following an ExternalName (a
 * Knative Service's points at Traefik's internal Service). The Host header keeps the name: the
 * ingress routes by it.
 */
import type { KubeClient, ObjectRef } from "../../shared/kube/client.ts";
import type { Destination } from "./delivery-proxy.ts";

export async function destinationFromHost(client: KubeClient, ref: ObjectRef): Promise<Destination> {
  const o = await client.get<{ status?: { address?: { url?: string } } }>(ref);
  const address = o?.status?.address?.url;
  if (!address) throw new Error(`${ref.kind} ${ref.namespace}/${ref.name} has no address yet`);
  const url = new URL(address);
  const host = url.host;
  url.hostname = await clusterIP(client, url.hostname);
  return { url, host };
}

interface Service {
  spec: { type?: string; clusterIP?: string; externalName?: string };
}

async function clusterIP(client: KubeClient, hostname: string, hops = 0): Promise<string> {
  const [name, namespace] = hostname.split(".") as [string, string | undefined];
  const svc = namespace ? await client.get<Service>({ apiVersion: "v1", kind: "Service", namespace, name }) : undefined;
  if (!svc) throw new Error(`no Service answers to ${hostname}`);
  if (svc.spec.type !== "ExternalName") return svc.spec.clusterIP!;
  if (hops >= 3) throw new Error(`${hostname}: too many ExternalName hops`);
  return clusterIP(client, svc.spec.externalName!, hops + 1);
}
