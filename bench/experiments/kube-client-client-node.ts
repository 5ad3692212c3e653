// shared/kube/client.ts as a function bundled by bench/kube-client.ts sees it: the product's client
// and transport, with client-node's KubeConfig loading the credentials (./kube-variants.ts).
import { ourTransport, type Env } from "./kube-variants.ts";

export * from "../../shared/kube/client.ts";
export async function connect(kubeconfig?: string, env: Env = process.env) {
  return ourTransport(await (await import("./kube-client-node.ts")).clientNodeLoaded(kubeconfig), env);
}
