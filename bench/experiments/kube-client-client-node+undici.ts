// shared/kube/client.ts as a function bundled by bench/kube-client.ts sees it: the product's client
// over undici, with client-node's KubeConfig loading the credentials (./kube-variants.ts).
import type { Env } from "./kube-variants.ts";

export * from "../../shared/kube/client.ts";
export async function connect(kubeconfig?: string, env: Env = process.env) {
  const [{ clientNodeLoaded }, { undiciTransport }] = await Promise.all([
    import("./kube-client-node.ts"),
    import("./kube-undici.ts"),
  ]);
  return undiciTransport(await clientNodeLoaded(kubeconfig), env);
}
