// client-node's KubeConfig as the credential loader (bench/experiments/kube-variants.ts): its config
// module, as the product's fallback loads it (the package index would load every API client too).
import type { RequestOptions as HttpsRequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node/dist/config.js";
import type { TlsSettings } from "../../shared/kube/h2.ts";
import type { Loaded } from "./kube-variants.ts";

/** client-node's KubeConfig: loadFromFile or loadFromDefault (KUBECONFIG, ~/.kube/config, loadFromCluster), applyToHTTPSOptions per request. */
export async function clientNodeLoaded(kubeconfig: string | undefined): Promise<Loaded> {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no current cluster in ${kubeconfig ?? "the default kubeconfig"}`);
  const options = async () => {
    const opts: HttpsRequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return opts;
  };
  const first = await options();
  const tls: TlsSettings = {};
  for (const k of ["ca", "cert", "key", "rejectUnauthorized", "servername"] as const)
    if (first[k] !== undefined) (tls as Record<string, unknown>)[k] = first[k];
  const headers = async () => {
    const opts = await options();
    const h = { ...(opts.headers as Record<string, string> | undefined) };
    if (opts.auth) h["Authorization"] = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
    return h;
  };
  return {
    server: cluster.server.replace(/\/$/, ""),
    tls,
    headers,
    ...(cluster.proxyUrl ? { proxyAgent: first.agent } : {}),
  };
}
