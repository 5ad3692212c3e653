// Changes that happen while the event source cannot keep up are not lost. The source is stopped
// (SIGSTOP) while other labelled Deployments churn, so the API server closes its watches and,
// by the time it runs again, the version it watched from has left the watch cache: it has to
// list again. Late in the pause someone scales a pair's Deployment to zero. Knative's receive
// adapter sends nothing for what a relist finds changed (its store's Replace is empty), so the
// pair would stay scaled down, shown Ready, until the periodic resync. The product's source passes
// the difference on, status sees the drift, apply puts the replicas back.
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../shared/kube/client.ts";
import { pause, resume, type RunningContainer } from "../node-containers.ts";
import { TEST_MANAGER, adminClient, eventually, freshNamespace } from "./helpers.ts";
import { invocations } from "./knative-helpers.ts";
import { condition, published, settledDpr } from "./pipeline-helpers.ts";
import { sourceContainers, sourceLog } from "./source-helpers.ts";

/** How long the source is stopped, and how many labelled Deployments churn meanwhile (one patch each, in turn). */
const PAUSE_MS = 150_000;
const CHURNED = 20;
const CHURN_EVERY_MS = 50;

const churnDeployment = (ns: string, i: number, round: number): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  // Labelled as the product's children are: the source's watch selects them, but no DynamoPoolRelay owns them.
  metadata: {
    name: `churn-${i}`,
    namespace: ns,
    labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay" },
    annotations: { round: String(round) },
  },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: `churn-${i}` } },
    template: { metadata: { labels: { app: `churn-${i}` } }, spec: { containers: [{ name: "c", image: "none" }] } },
  },
});

let paused: RunningContainer[] = [];
afterEach(() => {
  for (const p of paused) resume(p);
  paused = [];
});

describe("a change made while the event source's watch expired", () => {
  it(
    "reaches status once the source runs again: the scaled-down Deployment of a pair is put back",
    async () => {
      const admin = await adminClient();
      const ns = await freshNamespace("lost");
      await published(ns);
      await settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True");
      const deployment = { apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name: "g1-pool-relay" };
      const relistsBefore = sourceLog().filter(
        (l) => l["msg"] === "listed" && l["initial"] === false && l["kind"] === "Deployment",
      ).length;

      // Both replicas: the standby, watching, would otherwise take over and send the change as it came.
      const sources = await eventually("the source's two replicas running", async () => {
        const c = await sourceContainers(admin);
        return c.length === 2 ? c : undefined;
      });
      for (const s of sources) pause(s);
      paused = sources;
      const started = Date.now();
      let round = 0;
      for (let scaled = false; Date.now() - started < PAUSE_MS; round++) {
        await admin.apply(churnDeployment(ns, round % CHURNED, round), TEST_MANAGER, { force: true });
        // Late in the pause, someone else scales the pair's Deployment to zero.
        if (!scaled && Date.now() - started > PAUSE_MS - 20_000) {
          await admin.request(
            "PATCH",
            `/apis/apps/v1/namespaces/${ns}/deployments/g1-pool-relay`,
            { spec: { replicas: 0 } },
            "application/merge-patch+json",
          );
          scaled = true;
        }
        await new Promise((r) => setTimeout(r, CHURN_EVERY_MS));
      }
      expect((await admin.get<{ spec: { replicas: number } }>(deployment))!.spec.replicas).toBe(0);
      const resumed = Date.now();
      for (const s of sources) resume(s);
      paused = [];

      // Put back within the bound: a change is repaired within 2 minutes.
      await eventually(
        "the pair's Deployment has its 2 replicas again",
        async () => (await admin.get<{ spec: { replicas: number } }>(deployment))!.spec.replicas === 2,
        120_000,
      );
      await settledDpr(
        ns,
        "g1",
        "is Ready with 2 ready replicas",
        (d) => condition(d, "Ready")?.status === "True" && d.status?.["readyReplicas"] === 2,
        120_000,
      );
      // Not by the resync (every 10 minutes): by the drift status saw, or the source's requeue. Apply
      // logs its run after its last write, which can be after status wrote Ready: its line is waited for.
      const appliedRuns = () =>
        invocations("apply")
          .filter((i) => i.key?.namespace === ns && i.decision === "Applied")
          .map((i) => (i.key as { cause?: string }).cause);
      const repairs = await eventually(
        "apply's run that put the replicas back is logged",
        async () => {
          const runs = appliedRuns();
          return runs.some((c) => c === "Drift" || c === "Requeue") ? runs : undefined;
        },
        30_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; apply runs that applied: ${appliedRuns().join(", ") || "none"}`);
      });
      expect(repairs.filter((c) => c === "Drift" || c === "Requeue").length).toBeGreaterThan(0);
      console.log(`repaired by apply runs of cause ${repairs.join(", ")}`);
      // The pause did expire the watch: the source listed its Deployments again and found changes.
      const relists = sourceLog().filter(
        (l) => l["msg"] === "listed" && l["initial"] === false && l["kind"] === "Deployment",
      );
      expect(relists.length, "the source listed Deployments again after the pause").toBeGreaterThan(relistsBefore);
      expect(Number(relists.at(-1)!["changes"])).toBeGreaterThanOrEqual(1);
      console.log(
        `churned ${round} patches in ${PAUSE_MS / 1000} s; repaired ${((Date.now() - resumed) / 1000).toFixed(0)} s after the source resumed`,
      );
    },
    PAUSE_MS + 360_000,
  );
});
