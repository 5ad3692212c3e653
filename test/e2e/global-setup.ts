// The end-to-end suite on a cluster of the user's: KUBECONFIG names it (Knative Eventing and
// Serving installed, the product not), POOLRELAY_IMAGE the product's image and
// POOLRELAY_RELAY_IMAGE a Relay image its nodes can run. With POOLRELAY_UPGRADE_FROM (an earlier
// build's knative/ folder) and POOLRELAY_UPGRADE_FROM_IMAGE, it first installs that build and
// publishes a pair under it, the pair upgrade.test.ts checks. Then it installs knative/ with the
// image and waits for it to be Ready. uninstall.test.ts, last, removes the product as a user does;
// the teardown removes whatever the suite made that is still there, and puts back what was there
// before and is gone.
import type { TestProject } from "vitest/node";
import { stringify } from "yaml";
import {
  PRODUCT_NAMESPACE,
  installProduct,
  productManifests,
  waitProductReady,
  withImages,
} from "../../dev/product.ts";
import { KubeClient, connect, type KubeObject } from "../../shared/kube/client.ts";
import { eventually } from "../integration/helpers.ts";
import { CHILD_REFS, children } from "../integration/pipeline-helpers.ts";
import { kubectlRun, ref } from "./kubectl.ts";
import { E2E_MANAGER, createPair, e2eNamespace } from "./objects.ts";
import { E2E_NAMESPACE_LABEL, e2eSettings } from "./settings.ts";

/** A pair published under the earlier build: its namespace, and its children's uids then. */
export interface Survivor {
  namespace: string;
  uids: Record<string, string>;
}

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    kubectl: string;
    relayImage: string;
    survivor: Survivor | null;
  }
}

const READY_WITHIN_MS = 300_000;
let admin: KubeClient | undefined;
const made: KubeObject[] = [];
const existed: KubeObject[] = [];
let kubectl = "kubectl";
let kubeconfig = "";

const run = (args: string[], input?: string) => kubectlRun(kubectl, kubeconfig, args, input);
const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** The objects of `manifests` not there yet are the suite's to remove; those there are to put back. */
async function record(client: KubeClient, manifests: KubeObject[]): Promise<void> {
  for (const o of manifests) {
    if ([...made, ...existed].some((x) => key(x) === key(o))) continue;
    const found = await client.get<KubeObject>(ref(o));
    if (found) existed.push(found);
    else made.push(o);
  }
}

/** The pair g1, Ready with both Relay pods, and its children's uids. */
async function publishedPair(client: KubeClient, relayImage: string): Promise<Survivor> {
  const namespace = await e2eNamespace(client, "e2e-upgrade");
  await createPair(client, namespace, relayImage);
  type Dpr = KubeObject & {
    status?: { observedGeneration?: number; readyReplicas?: number; conditions?: { type: string; status: string }[] };
  };
  await eventually(
    `${namespace}/g1 Ready with both Relay pods under the earlier build`,
    async () => {
      const d = await client.get<Dpr>({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        namespace,
        name: "g1",
      });
      const ready = d?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      return ready && d?.status?.readyReplicas === 2 && d.status.observedGeneration === d.metadata.generation;
    },
    READY_WITHIN_MS,
  );
  const objs = await children(client, namespace);
  const uids = Object.fromEntries(CHILD_REFS.map(([, kind]) => [kind, objs[kind]!.metadata.uid!]));
  return { namespace, uids };
}

export async function setup(project: TestProject) {
  const settings = e2eSettings(process.env);
  ({ kubeconfig, kubectl } = settings);
  admin = new KubeClient(await connect(kubeconfig));
  for (const crd of ["brokers.eventing.knative.dev", "services.serving.knative.dev"]) {
    const found = await admin.get({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      name: crd,
    });
    if (!found)
      throw new Error(`the cluster of ${kubeconfig} has no ${crd}: install Knative Eventing and Serving first`);
  }
  // The suite installs, upgrades and uninstalls the product: not on a cluster where it runs already.
  if (await admin.get({ apiVersion: "v1", kind: "Namespace", name: PRODUCT_NAMESPACE }))
    throw new Error(
      `the cluster of ${kubeconfig} has the namespace ${PRODUCT_NAMESPACE}: the product is installed there; the suite installs, upgrades and uninstalls it, so run it on a cluster without it`,
    );
  let survivor: Survivor | null = null;
  if (settings.upgradeFrom) {
    const earlier = withImages(productManifests(kubectl, settings.upgradeFrom.knative), {
      "dynamo-pool-relay": settings.upgradeFrom.image,
    });
    await record(admin, earlier);
    console.log(
      `[e2e] installing the earlier build (${settings.upgradeFrom.knative}) with ${settings.upgradeFrom.image}`,
    );
    await installProduct(admin, kubectl, E2E_MANAGER, earlier);
    await waitProductReady(admin, earlier, READY_WITHIN_MS);
    survivor = await publishedPair(admin, settings.relayImage);
    console.log(`[e2e] ${survivor.namespace}/g1 Ready under the earlier build; upgrading`);
  }
  const objects = withImages(productManifests(kubectl), { "dynamo-pool-relay": settings.image });
  await record(admin, objects);
  console.log(
    `[e2e] installing knative/ with ${settings.image}: ${made.length} objects new, ${existed.length} there before`,
  );
  await installProduct(admin, kubectl, E2E_MANAGER, objects);
  await waitProductReady(admin, objects, READY_WITHIN_MS);
  project.provide("kubeconfig", kubeconfig);
  project.provide("kubectl", kubectl);
  project.provide("relayImage", settings.relayImage);
  project.provide("survivor", survivor);
}

export async function teardown() {
  if (!admin) return;
  const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
  // The tests' namespaces first, with their DynamoPoolRelays, while the functions still run.
  let since = performance.now();
  run(["delete", "namespace", "-l", `${E2E_NAMESPACE_LABEL}=true`, "--ignore-not-found", "--wait=true"]);
  console.log(`[e2e] removed its test namespaces in ${seconds(since)} s`);
  // What uninstall.test.ts did not remove (it failed, or did not run).
  since = performance.now();
  run(["delete", "--ignore-not-found", "--wait=true", "-f", "-"], made.map((o) => stringify(o)).join("---\n"));
  console.log(`[e2e] removed what remained of the ${made.length} objects it made in ${seconds(since)} s`);
  // What was there before and the uninstall removed (the local cluster's control plane installs the CRD).
  for (const o of existed) {
    // The connection has idled through the tests: a request the server refuses (a GOAWAY) is tried again.
    if ((await eventually(`read ${key(o)}`, async () => ({ found: await admin!.get(ref(o)) }))).found) continue;
    const {
      resourceVersion: _rv,
      uid: _uid,
      creationTimestamp: _ct,
      managedFields: _mf,
      generation: _g,
      ...metadata
    } = o.metadata;
    const { status: _status, ...rest } = o as KubeObject & { status?: unknown };
    await eventually(
      `put back ${key(o)}`,
      async () => !!(await admin!.apply({ ...rest, metadata }, E2E_MANAGER, { force: true })),
    );
    console.log(`[e2e] put back ${key(o)}, there before the suite`);
  }
}
