// The event source's gaps, on the real node: whatever changes while no replica of it runs, while it
// rolls, while its leader dies, while Knative's ApiServerSource adapter is stalled or while the
// Broker's ingress is gone, is reconciled within a bound once the gap closes. The source judges every
// pair from what it lists (shared/requeue.ts, requeueReason) and asks for each one off.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FAKE_NODE } from "../../dev/control-plane/index.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { crash, pause, resume } from "../node-containers.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { invocations } from "./knative-helpers.ts";
import { children, condition, published, rollout, settledDpr } from "./pipeline-helpers.ts";
import {
  containerRss,
  receiveAdapter,
  restartSource,
  scaleSource,
  sourceContainers,
  sourceLeader,
  sourceLog,
  sourceRolledOut,
} from "./source-helpers.ts";

/**
 * How long the Broker's ingress is gone: 90 s, long enough for the source's retries to reach their
 * 30 s cap (100 ms doubling). That they go on at the cap however long the outage lasts is
 * send-queue.test.ts's to show, without a clock.
 */
const OUTAGE_MS = Number(process.env["POOLRELAY_OUTAGE_S"] ?? 90) * 1000;
const INGRESS = "/apis/apps/v1/namespaces/knative-eventing/deployments/mt-broker-ingress";
const merge = "application/merge-patch+json";

let restore: (() => Promise<void> | void)[] = [];
/** Each test's namespace, deleted after it: its Relay pods would otherwise hold room on kwok's one node (220 pods) for the files after. */
let namespaces: string[] = [];
const fresh = async (prefix: string) => {
  const ns = await freshNamespace(prefix);
  namespaces.push(ns);
  return ns;
};
/** The pods on kwok's node, which every file's Relay pods share. */
const kwokPods = async (admin: KubeClient) =>
  (await admin.list<{ spec?: { nodeName?: string } }>("v1", "Pod", undefined)).filter(
    (p) => p.spec?.nodeName === FAKE_NODE,
  ).length;
let podsBefore = 0;
beforeAll(async () => {
  podsBefore = await kwokPods(await adminClient());
});
afterAll(async () => {
  console.log(`pods on ${FAKE_NODE}: ${podsBefore} before these tests, ${await kwokPods(await adminClient())} after`);
});
afterEach(async () => {
  for (const r of restore.reverse()) await r();
  restore = [];
  const admin = await adminClient();
  for (const ns of namespaces) await admin.request("DELETE", `/api/v1/namespaces/${ns}`);
  namespaces = [];
});

const childPath = (ns: string, plural: string, group = "/api/v1") =>
  `${group}/namespaces/${ns}/${plural}/g1-pool-relay`;
const replicasOf = async (admin: KubeClient, ns: string) =>
  (
    await admin.get<{ spec: { replicas: number } }>({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: ns,
      name: "g1-pool-relay",
    })
  )?.spec.replicas;
const sourcesOf = async (admin: KubeClient, ns: string) =>
  (
    await admin.get<{ data: Record<string, string> }>({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: ns,
      name: "g1-pool-relay",
    })
  )?.data["sources.json"] ?? "";
/** The apply runs for the namespace that wrote: the pair's name and the run's cause. */
const appliedRuns = (ns: string) =>
  invocations("apply")
    .filter((i) => i.key?.namespace === ns && i.decision === "Applied")
    .map((i) => ({ name: i.key!.name, cause: (i.key as { cause?: string }).cause }));
const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
/** The pair g1 published and Ready. */
const readyPair = async (ns: string) => {
  await published(ns);
  await settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True");
};

describe("the event source's gaps", () => {
  it("repairs what changed while no replica ran, once one is back: a Relay scaled down, a RoleBinding deleted, a new pair", async () => {
    const admin = await adminClient();
    const ns = await fresh("down");
    await readyPair(ns);
    await admin.apply(dgdObject(ns, "g2"), TEST_MANAGER);

    await scaleSource(admin, 0);
    restore.push(() => scaleSource(admin, 2));
    await admin.request(
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/deployments/g1-pool-relay`,
      { spec: { replicas: 0 } },
      merge,
    );
    await admin.request("DELETE", childPath(ns, "rolebindings", "/apis/rbac.authorization.k8s.io/v1"));
    await admin.apply(dprObject(ns, "g2"), TEST_MANAGER);
    // Nothing repairs them while no replica runs (the resync's slot is 24 hours away).
    await new Promise((r) => setTimeout(r, 5000));
    expect(await replicasOf(admin, ns)).toBe(0);
    expect((await children(admin, ns)).RoleBinding).toBeUndefined();

    const back = Date.now();
    await scaleSource(admin, 2);
    restore = [];
    await eventually("the Relay has its 2 replicas again", async () => (await replicasOf(admin, ns)) === 2, 120_000);
    await eventually(
      "the RoleBinding is back",
      async () => (await children(admin, ns)).RoleBinding !== undefined,
      120_000,
    );
    await settledDpr(ns, "g2", "is published", (d) => condition(d, "ServicePublished")?.status === "True", 120_000);
    const repaired = Date.now() - back;
    await settledDpr(
      ns,
      "g1",
      "is Ready with 2 ready replicas",
      (d) => condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2,
      60_000,
    );
    // By the source's catch-up: its first lists found the pairs off, and it asked for them. A
    // resync tick (every 10 minutes, asking for every unobserved pair) that comes first publishes
    // the new pair itself: the source then finds it observed and asks only for g1.
    const g2Cause = await eventually("apply's repairs are logged", async () => {
      const runs = appliedRuns(ns);
      const g2 = runs.find((r) => r.name === "g2" && (r.cause === "Requeue" || r.cause === "Resync"));
      return runs.some((r) => r.name === "g1" && r.cause === "Requeue") ? g2?.cause : undefined;
    });
    const asked = sourceLog()
      .filter((l) => l["msg"] === "requeued" && String(l["key"]).startsWith(`${ns}/`))
      .map((l) => `${String(l["key"])} ${String(l["reason"])}`);
    expect(asked).toEqual(
      expect.arrayContaining([`${ns}/g1 ChildrenOff`, ...(g2Cause === "Requeue" ? [`${ns}/g2 Unobserved`] : [])]),
    );
    expect(repaired).toBeLessThan(120_000);
    console.log(
      `repaired ${seconds(repaired)} after the source was scaled back up (Ready replicas included); asked: ${asked.join(", ")}; g2 published by a run of cause ${g2Cause}`,
    );
  });

  it("loses nothing while it rolls: a spec edit, a child's drift and a deleted RoleBinding made during a rolling update", async () => {
    const admin = await adminClient();
    const ns = await fresh("roll");
    await readyPair(ns);
    const document = await sourcesOf(admin, ns);

    const started = Date.now();
    await restartSource(admin);
    await admin.request(
      "PATCH",
      `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`,
      { spec: { replicas: 3 } },
      merge,
    );
    // While old and new replicas overlap: each change at another moment of the rollout.
    const changes = [
      () => admin.request("PATCH", childPath(ns, "configmaps"), { data: { "sources.json": "{}" } }, merge),
      () => admin.request("DELETE", childPath(ns, "rolebindings", "/apis/rbac.authorization.k8s.io/v1")),
      () => rollout(ns, ["aaaa1111", "cccc3333"]),
    ];
    for (const change of changes) {
      await eventually("the rollout moves on", async () => (await sourceContainers(admin)).length >= 1);
      await change();
      await new Promise((r) => setTimeout(r, 4000));
    }
    await eventually("the source's rollout is complete", () => sourceRolledOut(admin), 180_000);
    const rolled = Date.now();

    await eventually("the Relay runs 3 replicas", async () => (await replicasOf(admin, ns)) === 3, 120_000);
    await eventually(
      "the RoleBinding is back",
      async () => (await children(admin, ns)).RoleBinding !== undefined,
      120_000,
    );
    await eventually(
      "the sources document carries the DGD's rollout",
      async () => (await sourcesOf(admin, ns)).includes("cccc3333"),
      120_000,
    );
    const dpr = await settledDpr(ns, "g1", "observes its generation", () => true, 60_000);
    expect(dpr.metadata.generation).toBe(2);
    expect(await sourcesOf(admin, ns)).not.toBe(document);
    console.log(
      `rolled in ${seconds(rolled - started)}; every change reconciled ${seconds(Date.now() - rolled)} after`,
    );
  });

  it("takes over within 20 s when the leader dies, and sends: a child's drift made at that moment is repaired", async () => {
    const admin = await adminClient();
    const ns = await fresh("leader");
    await readyPair(ns);
    const leader = await eventually("a leader", () => sourceLeader(admin));
    const containers = await eventually("two replicas running", async () => {
      const c = await sourceContainers(admin);
      return c.length === 2 ? c : undefined;
    });
    const dying = containers.find((c) => c.pod === leader.pod)!;
    expect(dying).toBeDefined();

    const killed = Date.now();
    crash(dying);
    await admin.request(
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/deployments/g1-pool-relay`,
      { spec: { replicas: 0 } },
      merge,
    );
    const next = await eventually(
      "another replica leads",
      async () => {
        const l = await sourceLeader(admin);
        return l && l.identity !== leader.identity ? l : undefined;
      },
      60_000,
    );
    const tookOver = Date.now() - killed;
    await eventually("the Relay has its 2 replicas again", async () => (await replicasOf(admin, ns)) === 2, 120_000);
    const repaired = Date.now() - killed;
    const leading = sourceLog().filter((l) => l["msg"] === "leading" && l["identity"] === next.identity);
    expect(leading.length).toBeGreaterThan(0);
    expect(tookOver).toBeLessThan(20_000);
    console.log(
      `${next.pod} leads ${seconds(tookOver)} after ${leader.pod} was killed; the drift was repaired ${seconds(repaired)} after`,
    );
  });

  it("brings a DGD rollout made while the ApiServerSource adapter is stalled to the ConfigMap within 60 s", async () => {
    const admin = await adminClient();
    const ns = await fresh("stalled");
    await readyPair(ns);
    // The new namespace rolls the adapter: wait until the roll that adds it is over and one pod runs.
    const adapter = await eventually(
      "the ApiServerSource adapter rolled out with the namespace",
      () => receiveAdapter(admin, ns),
      120_000,
    );
    pause(adapter);
    restore.push(() => resume(adapter));

    const changed = Date.now();
    await rollout(ns, ["aaaa1111", "dddd4444"]);
    await eventually(
      "the sources document carries the rollout",
      async () => (await sourcesOf(admin, ns)).includes("dddd4444"),
      60_000,
    );
    const took = Date.now() - changed;
    // Not through the stalled adapter: by the source, which saw the DGD's change and its status not
    // showing it. Its log line reaches the file the test reads by the log agent, maybe after the write.
    await eventually("the source logged its request for the DGD not shown", async () =>
      sourceLog().some((l) => l["msg"] === "requeued" && l["key"] === `${ns}/g1` && l["reason"] === "DGDNotShown"),
    );
    expect(took).toBeLessThan(60_000);
    console.log(`in the ConfigMap ${seconds(took)} after the DGD's change, the adapter stalled`);
  });

  it(
    `reconciles every change made while the Broker's ingress is gone (${OUTAGE_MS / 1000} s) within 60 s of its return, the source's memory flat`,
    async () => {
      const admin = await adminClient();
      const ns = await fresh("ingress");
      await readyPair(ns);
      const leader = await eventually("a leader", () => sourceLeader(admin));
      const source = (await sourceContainers(admin)).find((c) => c.pod === leader.pod)!;

      await admin.request("PATCH", INGRESS, { spec: { replicas: 0 } }, merge);
      restore.push(async () => void (await admin.request("PATCH", INGRESS, { spec: { replicas: 1 } }, merge)));
      await eventually(
        "the Broker's ingress gone",
        async () =>
          (await admin.list("v1", "Pod", "knative-eventing", "app.kubernetes.io/component=broker-ingress")).length ===
          0,
        120_000,
      );
      const rss: number[] = [containerRss(source)];
      const sampler = setInterval(() => rss.push(containerRss(source)), 5000);
      restore.push(() => clearInterval(sampler));
      const down = Date.now();
      // A DynamoPoolRelay's edit, a DGD's rollout and a child's drift, while nothing can be delivered.
      await admin.request(
        "PATCH",
        `/apis/nvidia.com/v1alpha1/namespaces/${ns}/dynamopoolrelays/g1`,
        { spec: { replicas: 3 } },
        merge,
      );
      await rollout(ns, ["aaaa1111", "eeee5555"]);
      await admin.request("PATCH", childPath(ns, "configmaps"), { data: { "sources.json": "{}" } }, merge);
      await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - down))));
      clearInterval(sampler);
      expect(await replicasOf(admin, ns)).toBe(2);

      await admin.request("PATCH", INGRESS, { spec: { replicas: 1 } }, merge);
      restore = [];
      await eventually(
        "the Broker's ingress back",
        async () =>
          (
            await admin.list<{ status?: { conditions?: { type: string; status: string }[] } }>(
              "v1",
              "Pod",
              "knative-eventing",
              "app.kubernetes.io/component=broker-ingress",
            )
          ).some((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")),
        120_000,
      );
      const back = Date.now();
      await eventually("the Relay runs 3 replicas", async () => (await replicasOf(admin, ns)) === 3, 60_000);
      await eventually(
        "the sources document carries the rollout",
        async () => (await sourcesOf(admin, ns)).includes("eeee5555"),
        60_000,
      );
      const dpr = await settledDpr(ns, "g1", "observes its generation", () => true, 60_000);
      const took = Date.now() - back;
      expect(dpr.metadata.generation).toBe(2);
      expect(took).toBeLessThan(60_000);
      const growth = Math.max(...rss) - rss[0]!;
      expect(rss.length).toBeGreaterThan(OUTAGE_MS / 5000 - 2);
      expect(growth).toBeLessThan(16 * 1048576);
      console.log(
        `reconciled ${seconds(took)} after the ingress returned; the leader's RSS ${(rss[0]! / 1048576).toFixed(1)} MiB at the outage's start, at most ${(Math.max(...rss) / 1048576).toFixed(1)} MiB during it (${rss.length} samples)`,
      );
    },
    OUTAGE_MS + 360_000,
  );
});
