// Each variant's `connect` in one process (bench/experiments/kube-sequence.ts); a bundle imports
// only its own (./kube-client-<variant>.ts).
import { connect, type Connection } from "../../shared/kube/client.ts";
import { ourTransport, oursLoaded, type Env } from "./kube-variants.ts";

export type Variant = "ours" | "undici" | "client-node" | "client-node+undici";
export const VARIANTS: Variant[] = ["ours", "undici", "client-node", "client-node+undici"];

/** `connect` as the product's, for each variant. */
export async function connectWith(variant: Variant, kubeconfig?: string, env: Env = process.env): Promise<Connection> {
  switch (variant) {
    case "ours":
      return connect(kubeconfig, env);
    case "undici":
      return (await import("./kube-undici.ts")).undiciTransport(await ourCredentials(kubeconfig), env);
    case "client-node":
      return ourTransport(await (await import("./kube-client-node.ts")).clientNodeLoaded(kubeconfig), env);
    case "client-node+undici":
      return (await import("./kube-undici.ts")).undiciTransport(
        await (await import("./kube-client-node.ts")).clientNodeLoaded(kubeconfig),
        env,
      );
  }
}

export async function ourCredentials(kubeconfig: string | undefined) {
  const l = await oursLoaded(kubeconfig);
  if (!l) throw new Error("these credentials need client-node (the bench's kubeconfigs never do)");
  return l;
}
