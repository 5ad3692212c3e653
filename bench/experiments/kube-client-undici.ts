// shared/kube/client.ts as a function bundled by bench/kube-client.ts sees it: the product's client,
// connected over undici with our credential loader (./kube-variants.ts).
import { oursLoaded, type Env } from "./kube-variants.ts";

export * from "../../shared/kube/client.ts";
export async function connect(kubeconfig?: string, env: Env = process.env) {
  const l = await oursLoaded(kubeconfig);
  if (!l) throw new Error("these credentials need client-node (the bench's kubeconfigs never do)");
  return (await import("./kube-undici.ts")).undiciTransport(l, env);
}
