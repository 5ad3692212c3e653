// The end-to-end suite on a cluster of the user's: KUBECONFIG names it (Knative Eventing and
// Serving installed), POOLRELAY_IMAGE the product's image and POOLRELAY_RELAY_IMAGE a Relay image
// its nodes can run. Installs knative/ with that image, waits for it to be Ready, and at the end
// removes what it made: the objects that were not there before, and its test namespaces.
import { spawnSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { stringify } from "yaml";
import { installProduct, productManifests, waitProductReady, withImages } from "../../dev/product.ts";
import { KubeClient, connect, type KubeObject } from "../../shared/kube/client.ts";
import { E2E_NAMESPACE_LABEL, e2eSettings } from "./settings.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    relayImage: string;
  }
}

const FIELD_MANAGER = "dynamo-pool-relay/e2e";
const READY_WITHIN_MS = 300_000;
let made: KubeObject[] = [];
let kubectl = "kubectl";
let kubeconfig = "";

function run(args: string[], input?: string): string {
  const r = spawnSync(kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { encoding: "utf8", input });
  if (r.error) throw new Error(`${kubectl}: ${r.error.message} (set KUBECTL to a kubectl binary)`);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const ref = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
});

export async function setup(project: TestProject) {
  const settings = e2eSettings(process.env);
  ({ kubeconfig, kubectl } = settings);
  const admin = new KubeClient(await connect(kubeconfig));
  for (const crd of ["brokers.eventing.knative.dev", "services.serving.knative.dev"]) {
    const found = await admin.get({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      name: crd,
    });
    if (!found)
      throw new Error(`the cluster of ${kubeconfig} has no ${crd}: install Knative Eventing and Serving first`);
  }
  const objects = withImages(productManifests(kubectl), { "dynamo-pool-relay": settings.image });
  const before = await Promise.all(objects.map((o) => admin.get(ref(o))));
  made = objects.filter((_, i) => !before[i]);
  console.log(`[e2e] installing knative/ with ${settings.image}: ${made.length} of ${objects.length} objects new`);
  await installProduct(admin, kubectl, FIELD_MANAGER, objects);
  await waitProductReady(admin, objects, READY_WITHIN_MS);
  project.provide("kubeconfig", kubeconfig);
  project.provide("relayImage", settings.relayImage);
}

export function teardown() {
  if (!kubeconfig) return;
  // The tests' namespaces first, with their DynamoPoolRelays, while the functions still run.
  run(["delete", "namespace", "-l", `${E2E_NAMESPACE_LABEL}=true`, "--ignore-not-found", "--wait=true"]);
  if (made.length === 0) return;
  run(["delete", "--ignore-not-found", "--wait=true", "-f", "-"], made.map((o) => stringify(o)).join("---\n"));
  console.log(`[e2e] removed the ${made.length} objects it made`);
}
