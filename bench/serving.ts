// npm run bench:serving: the product's functions under the real Knative Serving on the real node
// (control plane profile node), one function at a time from zero pods: an event's answer through
// Traefik and the activator and where its time goes (pod created, container started, Ready,
// answered; polled every 50 ms), a warm event's answer, then how long the idle pod takes to be
// scaled down and to be gone. A wake-up's pod-seconds are counted from sending the first event
// (the pod is created some 70-100 ms later) to the pod gone, next to what bench/idle-model.ts
// computes for one. Root only. Prints Markdown tables.
import { ensureBinaries } from "../dev/control-plane/binaries.ts";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { postToService, productOnNode } from "../dev/node/product-services.ts";
import { installProduct, productReadiness } from "../dev/product.ts";
import { toBinary } from "../shared/cloudevent.ts";
import { EventType, productEvent } from "../shared/events.ts";
import { CLUSTER, idleCost, scaling } from "./idle-model.ts";
import { knativeDocs } from "./knative-settings.ts";

const MANAGER = "dynamo-pool-relay/bench";
const POLL_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; state?: { running?: unknown } }[];
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 300_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

const started = performance.now();
const cp = await startControlPlane({ profile: "node", ownerPid: process.pid, timeoutMs: 300_000 });
const stackS = (performance.now() - started) / 1000;
try {
  const client = cp.client;
  const objects = productOnNode(ensureBinaries().kubectl);
  const services = objects.filter((o) => o.apiVersion === "serving.knative.dev/v1" && o.kind === "Service");
  await installProduct(client, ensureBinaries().kubectl, MANAGER, objects);
  await until("every Knative object of the product Ready", async () =>
    (await productReadiness(client, objects)).every((r) => r.ready) ? true : undefined,
  );
  const namespace = services[0]!.metadata.namespace!;
  const pods = (service: string) => client.list<Pod>("v1", "Pod", namespace, `serving.knative.dev/service=${service}`);
  const event = () =>
    toBinary(
      productEvent(
        EventType.Reconcile,
        { namespace: "bench", name: "g1", cause: "Drift" },
        { source: "/bench/serving", cause: "c", time: "2026-03-01T00:00:00Z" },
      ),
    );
  const manifests = knativeDocs("services.yaml").filter((d) => d.kind === "Service");

  const rows: string[] = [];
  const idleRows: string[] = [];
  for (const s of services) {
    const name = s.metadata.name;
    const host = `${name}.${namespace}.svc.cluster.local`;
    await until(`${name} at zero pods`, async () => ((await pods(name)).length === 0 ? true : undefined));
    // From zero: the answer, and the pod's way there as seen from the API server.
    const marks: Record<string, number> = {};
    const t0 = performance.now();
    let answered = false;
    const watcher = (async () => {
      while (!answered) {
        const [pod] = (await pods(name)).filter((p) => !p.metadata.deletionTimestamp);
        const at = performance.now() - t0;
        if (pod) marks["created"] ??= at;
        if (pod?.status?.containerStatuses?.every((c) => c.state?.running)) marks["started"] ??= at;
        if (pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) marks["ready"] ??= at;
        await sleep(POLL_MS);
      }
    })();
    const cold = event();
    let coldStatus: number;
    let coldMs: number;
    try {
      coldStatus = await postToService(client, host, cold.headers, cold.body);
      coldMs = performance.now() - t0;
    } finally {
      answered = true;
      await watcher;
    }
    const t1 = performance.now();
    const warm = event();
    const warmStatus = await postToService(client, host, warm.headers, warm.body);
    const warmMs = performance.now() - t1;
    const lastAnswer = performance.now();
    // Idle: scaled down (the pod marked for deletion), then gone.
    const downS = await until(`${name} scaled down`, async () =>
      (await pods(name)).every((p) => p.metadata.deletionTimestamp)
        ? (performance.now() - lastAnswer) / 1000
        : undefined,
    );
    const goneS = await until(`${name} gone`, async () =>
      (await pods(name)).length === 0 ? (performance.now() - lastAnswer) / 1000 : undefined,
    );
    const ms = (k: string) => (marks[k] === undefined ? "–" : `${Math.round(marks[k])}`);
    rows.push(
      `| ${name.replace("poolrelay-", "")} | ${coldStatus} in ${Math.round(coldMs)} ms | ${ms("created")} / ${ms("started")} / ${ms("ready")} | ${warmStatus} in ${warmMs.toFixed(1)} ms |`,
    );
    const manifest = manifests.find((m) => m.metadata.name === name)!;
    const model = idleCost(
      scaling(manifest.spec.template?.metadata?.annotations, manifest.spec.template?.spec.timeoutSeconds),
      1,
      0,
    ).podSeconds;
    const podSeconds = coldMs / 1000 + (lastAnswer - t1) / 1000 + goneS;
    idleRows.push(
      `| ${name.replace("poolrelay-", "")} | ${downS.toFixed(1)} | ${(goneS - downS).toFixed(1)} | ${podSeconds.toFixed(1)} | ${model[0]}–${model[1]} |`,
    );
  }
  console.log(
    `stack (images checked or built, control plane, node, Knative Serving and Eventing, Traefik) up in ${stackS.toFixed(1)} s; autoscaler: the Services' window, scale-to-zero grace ${CLUSTER.graceSeconds} s\n`,
  );
  console.log(
    "| function | first event from zero pods: answer | pod created / containers started / Ready (ms after sending) | warm event |\n|---|---|---|---|",
  );
  console.log(rows.join("\n"));
  console.log(
    "\n| function | idle to scaled down (s) | scaled down to gone (s) | pod-seconds of one wake-up, measured | the idle model's, for one wake-up |\n|---|---|---|---|---|",
  );
  console.log(idleRows.join("\n"));
} finally {
  await cp.stop();
}
