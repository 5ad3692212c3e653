// What the end-to-end suite takes from its environment, checked before it touches the cluster.

/** The label on every namespace the suite makes: its teardown deletes them by it. */
export const E2E_NAMESPACE_LABEL = "dynamo-pool-relay.e2e";

export interface E2eSettings {
  kubeconfig: string;
  kubectl: string;
  image: string;
  relayImage: string;
  /** The earlier build the suite installs first and upgrades from: its knative/ folder and its image. */
  upgradeFrom?: { knative: string; image: string };
}

export function e2eSettings(env: Record<string, string | undefined>): E2eSettings {
  const missing = (["KUBECONFIG", "POOLRELAY_IMAGE", "POOLRELAY_RELAY_IMAGE"] as const).filter((v) => !env[v]);
  if (missing.length > 0)
    throw new Error(
      `npm run test:e2e needs ${missing.join(", ")}: KUBECONFIG names a cluster with Knative Eventing and Serving, ` +
        "POOLRELAY_IMAGE the product's image (built from the Dockerfile, pullable there), " +
        "POOLRELAY_RELAY_IMAGE an image with python3 -m dynamo.kv_dc_relay (ai-dynamo 1.6.1) its nodes can run",
    );
  if (env["KUBECONFIG"]!.includes(":"))
    throw new Error("KUBECONFIG names one file here: the suite installs on, and removes from, exactly one cluster");
  const from = env["POOLRELAY_UPGRADE_FROM"];
  const fromImage = env["POOLRELAY_UPGRADE_FROM_IMAGE"];
  if (!from !== !fromImage)
    throw new Error(
      "POOLRELAY_UPGRADE_FROM (the knative/ folder of the build to upgrade from) and POOLRELAY_UPGRADE_FROM_IMAGE (that build's image) go together",
    );
  return {
    kubeconfig: env["KUBECONFIG"]!,
    kubectl: env["KUBECTL"] || "kubectl",
    image: env["POOLRELAY_IMAGE"]!,
    relayImage: env["POOLRELAY_RELAY_IMAGE"]!,
    ...(from && fromImage ? { upgradeFrom: { knative: from, image: fromImage } } : {}),
  };
}
