/**
 * Installs Knative Serving, Knative Eventing and Traefik on the real node and waits until every one
 * of their Deployments is Available: the CRDs first (Established before any object of theirs),
 * then the rest, then the webhook configurations once every Deployment is (before that, the
 * webhooks' failurePolicy would refuse Knative's own objects), waiting until each has its CA.
 */
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { knativeObjects, SERVING_NAMESPACE } from "./knative.ts";
import { traefikObjects } from "./traefik.ts";

const FIELD_MANAGER = "dynamo-pool-relay/control-plane";

type Until = <T>(what: string, probe: () => Promise<T | undefined>) => Promise<T>;

interface Conditions {
  status?: { conditions?: { type: string; status: string }[] };
}

const holds = (obj: Conditions | undefined, type: string) =>
  obj?.status?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;

async function available(client: KubeClient, until: Until, namespace: string, name: string): Promise<void> {
  await until(`Deployment ${namespace}/${name} Available`, async () =>
    holds(await client.get<Conditions>({ apiVersion: "apps/v1", kind: "Deployment", namespace, name }), "Available")
      ? true
      : undefined,
  );
}

async function applyAll(client: KubeClient, objects: KubeObject[]): Promise<void> {
  for (const obj of objects) await client.apply(obj, FIELD_MANAGER, { force: true });
}

export async function installKnative(client: KubeClient, configDir: string, until: Until): Promise<void> {
  const { objects, webhooks } = knativeObjects(configDir);
  const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
  await applyAll(client, crds);
  for (const crd of crds) {
    await until(`CRD ${crd.metadata.name} Established`, async () =>
      holds(
        await client.get<Conditions>({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name }),
        "Established",
      )
        ? true
        : undefined,
    );
  }
  await applyAll(
    client,
    objects.filter((o) => o.kind !== "CustomResourceDefinition"),
  );
  await applyAll(client, traefikObjects());
  const deployments = [...objects, ...traefikObjects()].filter((o) => o.kind === "Deployment");
  for (const d of deployments)
    await available(client, until, d.metadata.namespace ?? SERVING_NAMESPACE, d.metadata.name);
  await applyAll(client, webhooks);
  // Knative's webhooks put their CA into these themselves; before that the API server cannot call them.
  for (const w of webhooks) {
    await until(`${w.kind} ${w.metadata.name} given its CA`, async () => {
      const live = await client.get<{ webhooks?: { clientConfig?: { caBundle?: string } }[] }>({
        apiVersion: w.apiVersion,
        kind: w.kind,
        name: w.metadata.name,
      });
      return live?.webhooks?.length && live.webhooks.every((h) => h.clientConfig?.caBundle) ? true : undefined;
    });
  }
}
