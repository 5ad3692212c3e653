// NVIDIA Dynamo's own Relay (`python3 -m dynamo.kv_dc_relay`, ai-dynamo 1.6.1) in the pods the
// product renders, on the real node: the kubelet's gRPC probes make them Ready, the DynamoPoolRelay
// reports Ready from their endpoints, a DGD rollout reaches the running Relay through the mounted
// ConfigMap without a restart (the revision it applies is the status's), and the Relay refuses a
// document of another connection revision; a selector's Relay applies the union of its DGDs' worker
// namespaces. Each Relay reports what it runs at GET /engine/state.
import { describe, expect, it } from "vitest";
import { NODE_NAME } from "../../dev/node/config.ts";
import { RELAY_IMAGE, RELAY_RESOURCES } from "../../dev/node/product-services.ts";
import { selectorLabels, SOURCES_KEY } from "../../shared/names.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { adminClient, dgdObject, dprObject, eventually, freshNamespace, TEST_MANAGER } from "../integration/helpers.ts";
import { installedProduct } from "./installed.ts";
import { children, condition, published, rollout, settledDpr } from "../integration/pipeline-helpers.ts";

const MISMATCH = "sources connection revision does not match the running Relay";

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount: number }[];
  };
}

interface EngineState {
  podUID: string | null;
  mode: string;
  connectionRevision: string | null;
  ready: boolean;
  sources: { desiredRevision: string | null; appliedRevision: string | null; count: number; lastError: string | null };
}

/** What the Relay in a pod runs, from its system port (DYN_SYSTEM_PORT, 8081), reached by the pod's IP. */
async function engineState(pod: Pod): Promise<EngineState> {
  const res = await fetch(`http://${pod.status!.podIP}:8081/engine/state`, { signal: AbortSignal.timeout(5_000) });
  expect(res.status).toBe(200);
  return (await res.json()) as EngineState;
}

async function relayPods(client: KubeClient, ns: string, name = "g1"): Promise<Pod[]> {
  const selector = Object.entries(selectorLabels(name))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = await client.list<Pod>("v1", "Pod", ns, selector);
  return pods.filter((p) => !p.metadata.deletionTimestamp);
}

/** The Relay's image on the real node, not kwok's, where the tests' DynamoPoolRelays go by default. */
const ON_THE_REAL_NODE = {
  image: RELAY_IMAGE,
  resources: RELAY_RESOURCES,
  nodeSelector: { "kubernetes.io/hostname": NODE_NAME },
};

const podReady = (p: Pod) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

describe("the real Relay in the product's pods", () => {
  it(
    "goes Ready by its gRPC health, applies a rollout's sources without a restart and refuses another connection revision",
    { timeout: 900_000 },
    async () => {
      const client = await adminClient();
      await installedProduct(client);
      const ns = await freshNamespace("relay");
      await published(ns, "g1", {}, ON_THE_REAL_NODE);

      // Ready comes from the Relay's own gRPC health: the kubelet's probes, then the Service's endpoints.
      // Ready needs one listener; both pods are looked at, so wait for the status to count both Ready.
      const ready = await settledDpr(
        ns,
        "g1",
        "Ready with both Relay pods Ready",
        (d) => condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2,
        300_000,
      );
      const status = ready.status!;
      const before = await relayPods(client, ns);
      expect(before).toHaveLength(2);
      for (const pod of before) {
        expect(podReady(pod), pod.metadata.name).toBe(true);
        const state = await engineState(pod);
        expect(state).toMatchObject({
          podUID: pod.metadata.uid,
          mode: "from-file",
          connectionRevision: status["connectionRevision"],
          ready: true,
        });
        expect(state.sources).toMatchObject({ appliedRevision: status["sourcesRevision"], lastError: null });
      }

      // A DGD rollout: the old and new worker generations side by side. The product writes the new
      // document; the kubelet updates the mounted file; the running Relay applies it.
      await rollout(ns, ["a1b2c3", "d4e5f6"]);
      const rolled = await settledDpr(
        ns,
        "g1",
        "shows the rollout's sources",
        (d) => d.status?.["sourcesRevision"] !== status["sourcesRevision"],
        120_000,
      );
      expect(rolled.status?.["connectionRevision"]).toBe(status["connectionRevision"]);
      await eventually(
        "each Relay pod applies the rollout's sources",
        async () => {
          const states = await Promise.all(before.map(engineState));
          return states.every(
            (s) => s.sources.appliedRevision === rolled.status?.["sourcesRevision"] && s.sources.count === 2,
          );
        },
        180_000,
      );
      const after = await relayPods(client, ns);
      expect(after.map((p) => p.metadata.uid).sort()).toEqual(before.map((p) => p.metadata.uid).sort());
      for (const pod of after) expect(pod.status?.containerStatuses?.[0]?.restartCount, pod.metadata.name).toBe(0);

      // A Relay of the same pod template, fed a copy of the product's document: it applies it. Then
      // the copy changes under another connection revision, as a document for the next Relay
      // configuration reaches a pod of the previous one during a rollout: the running Relay refuses
      // it and keeps what it applied, without a restart.
      const { ConfigMap: configMap, Deployment: deployment } = await children(client, ns);
      const document = JSON.parse(configMap!.data[SOURCES_KEY]!) as { connectionRevision: string };
      expect(document.connectionRevision).toBe(status["connectionRevision"]);
      const copy = (doc: object): KubeObject => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "copy", namespace: ns },
        data: { [SOURCES_KEY]: JSON.stringify(doc) },
      });
      await client.apply(copy(document), TEST_MANAGER);
      await client.apply(
        {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "previous-configuration", namespace: ns },
          spec: { ...deployment!.spec.template.spec, volumes: [{ name: "sources", configMap: { name: "copy" } }] },
        },
        TEST_MANAGER,
      );
      const previous = await eventually(
        "the Relay fed the copy Ready",
        async () => {
          const pod = await client.get<Pod>({
            apiVersion: "v1",
            kind: "Pod",
            namespace: ns,
            name: "previous-configuration",
          });
          return pod && podReady(pod) ? pod : undefined;
        },
        180_000,
      );
      expect((await engineState(previous)).sources).toMatchObject({
        appliedRevision: rolled.status?.["sourcesRevision"],
        lastError: null,
      });
      await client.apply(copy({ ...document, connectionRevision: "0".repeat(64) }), TEST_MANAGER);
      const refused = await eventually(
        "the running Relay refuses the document of another connection revision",
        async () => {
          const state = await engineState(previous);
          return state.sources.lastError ? state : undefined;
        },
        180_000,
      );
      expect(refused.sources).toMatchObject({
        appliedRevision: rolled.status?.["sourcesRevision"],
        lastError: MISMATCH,
      });
      const still = await client.get<Pod>({
        apiVersion: "v1",
        kind: "Pod",
        namespace: ns,
        name: "previous-configuration",
      });
      expect(still?.metadata.uid).toBe(previous.metadata.uid);
      expect(still?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    },
  );

  it(
    "serves the three DGDs a selector picks: each Relay pod applies their union, then a rollout of one of them",
    { timeout: 900_000 },
    async () => {
      const client = await adminClient();
      await installedProduct(client);
      const ns = await freshNamespace("relay-selector");
      for (const name of ["a1", "a2", "a3"]) await client.apply(dgdObject(ns, name, {}, { pool: "a" }), TEST_MANAGER);
      await client.apply(
        dprObject(ns, "pool", { ...ON_THE_REAL_NODE, dgdSelector: { matchLabels: { pool: "a" } } }),
        TEST_MANAGER,
      );
      const ready = await settledDpr(
        ns,
        "pool",
        "Ready over three DGDs with both Relay pods Ready",
        (d) => condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2,
        300_000,
      );
      expect(ready.status).toMatchObject({
        selectedDGDs: 3,
        eligibleDGDs: 3,
        workerNamespaces: [`${ns}-a1`, `${ns}-a2`, `${ns}-a3`],
      });
      const pods = await relayPods(client, ns, "pool");
      expect(pods).toHaveLength(2);
      for (const pod of pods)
        expect((await engineState(pod)).sources).toMatchObject({
          appliedRevision: ready.status?.["sourcesRevision"],
          count: 3,
          lastError: null,
        });

      await rollout(ns, ["a1b2c3", "d4e5f6"], "a2");
      const rolled = await settledDpr(
        ns,
        "pool",
        "shows a2's rollout",
        (d) => d.status?.["workerNamespaces"]?.length === 4,
        120_000,
      );
      await eventually(
        "each Relay pod applies the four sources",
        async () =>
          (await Promise.all(pods.map(engineState))).every(
            (st) => st.sources.appliedRevision === rolled.status?.["sourcesRevision"] && st.sources.count === 4,
          ),
        180_000,
      );
    },
  );
});
