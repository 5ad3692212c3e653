// npm run bench: on a local control plane with a real node (Knative Serving and Eventing as pods)
// and the product installed from knative/, measures (1) Kubernetes API requests per event over the
// whole chain an event sets off, and event-to-Ready latency through the Broker, (2) cold start of
// each bundled function as a process on this host next to an empty Functions Framework function,
// and (3) the memory of the whole local stack. (Scale to zero and the idle cost: bench:serving.)
// Prints Markdown tables. Numbers are measurements of this machine, never assertions.
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { allInvocationsByPod, type Invocation } from "../dev/node/product-observed.ts";
import { BROKER, startProductCluster } from "../dev/node/product-cluster.ts";
import { PRODUCT_NAMESPACE, productReadiness } from "../dev/product.ts";
import { startTap, tapTrigger } from "../dev/tap.ts";
import { bundle } from "../scripts/bundle.ts";
import { toBinary, type CloudEvent } from "../shared/cloudevent.ts";
import { EventType, productEvent } from "../shared/events.ts";
import type { KubeObject } from "../shared/kube/client.ts";
import { coldStart, serviceAccountKubeconfig, type ColdStart } from "./cold-start.ts";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { buildNodeAssets } from "./node-assets.ts";
import { dgd, dpr, namespaceWatched, since, sleep, until } from "./pipeline-support.ts";
import { stackMemory } from "./stack-memory.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const MANAGER = "dynamo-pool-relay/bench";
const entry = `${root}dist/functions/main.mjs`;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

buildNodeAssets();
const startedAt = performance.now();
const cp = await startProductCluster({ fieldManager: MANAGER });
try {
  const admin = cp.client;
  const stackReadyS = (performance.now() - startedAt) / 1000;
  const events: CloudEvent[] = [];
  // The Broker's filter pod delivers to the tap: it listens where pods reach this host.
  const tap = await startTap((e) => events.push(e), cp.hostAddress);
  const trigger = tapTrigger("bench-tap", PRODUCT_NAMESPACE, BROKER, tap.sink);
  await admin.apply(trigger, MANAGER, { force: true });
  await until("the tap Trigger Ready", async () => (await productReadiness(admin, [trigger])).every((r) => r.ready));

  const ns = "bench";
  await namespaceWatched(admin, ns, MANAGER);
  const dprStatus = async (name: string) =>
    (
      await admin.get<{ status?: { conditions?: { type: string; status: string }[]; workerNamespaces?: string[] } }>({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        namespace: ns,
        name,
      })
    )?.status;
  const logs = () => (cp.podLogs.sweep(), allInvocationsByPod(cp.logs));
  const count = () => [...logs().values()].reduce((n, l) => n + l.length, 0);
  const about = (names: readonly string[]) => (i: Invocation) =>
    names.some(
      (name) =>
        (i.key?.namespace === ns && JSON.stringify(i).includes(`"name":"${name}"`)) ||
        ((i.event.subject ?? "").includes(`/namespaces/${ns}/`) && (i.event.subject ?? "").includes(name)),
    );

  const lastEvent = (kind: string, name: string) =>
    events.filter((e) => e.extensions["kind"] === kind && e.extensions["name"] === name).at(-1)!;
  const liveDpr = async (name: string) =>
    (await admin.get<KubeObject>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name }))!;
  const SELECTOR = { matchLabels: { "bench/pool": "a" } };
  const labelled = (d: KubeObject): KubeObject => ({
    ...d,
    metadata: { ...d.metadata, labels: SELECTOR.matchLabels },
  });
  /** A DGD's workers in two generations, as the Dynamo operator reports a rollout; resolves once `dprName`'s status shows them. */
  async function rollout(dgdName: string, dprName: string): Promise<void> {
    const live = (await admin.get<KubeObject>({
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      namespace: ns,
      name: dgdName,
    }))!;
    const names = [`${dgdName}-decode-aaaa1111`, `${dgdName}-decode-bbbb2222`];
    await admin.replaceStatus({ ...live, status: { components: { decode: { componentNames: names } } } });
    await until(`${dgdName}'s rollout observed`, async () =>
      (await dprStatus(dprName))?.workerNamespaces?.some((n) => n.endsWith(`${dgdName}-bbbb2222`)),
    );
  }

  /** Posts an event the tap saw, or one made from it, to the Broker again under a new id. */
  async function replay(event: CloudEvent): Promise<void> {
    const res = await fetch(cp.brokerIngress, {
      method: "POST",
      ...toBinary({ ...event, id: randomUUID(), time: now() }),
    });
    if (res.status !== 202) throw new Error(`the broker ingress answered ${res.status}`);
  }

  /** Runs `act`, waits until no new invocation about the keys for 2 s, and sums what it cost. */
  async function measure(label: string, name: string | string[], act: () => Promise<void>): Promise<string> {
    const before = logs();
    await act();
    let seen = -1;
    await until(`${label} is quiet`, async () => {
      const n = count();
      if (n === seen) return true;
      seen = n;
      await sleep(2000);
      return false;
    });
    cp.podLogs.sweep();
    const slice = since(cp.logs, before).filter(about(typeof name === "string" ? [name] : name));
    // BENCH_DETAIL=1: every invocation of the chain, to see which events cost what.
    if (process.env["BENCH_DETAIL"])
      for (const l of slice)
        console.error(
          `  ${label.split(" ")[0]}: ${l.function} ${l.event.id.slice(0, 8)} ${l.event.type} ${l.event.subject ?? ""} ${l.decision ?? ""} ${l.reads}/${l.writes}`,
        );
    const per = (fn: string) => slice.filter((l) => l.function === fn);
    const cell = (fn: string) =>
      `${per(fn).length} × ${per(fn).reduce((n, l) => n + l.reads, 0)} / ${per(fn).reduce((n, l) => n + l.writes, 0)}`;
    const total = slice.reduce((n, l) => n + l.reads + l.writes, 0);
    const writes = slice.reduce((n, l) => n + l.writes, 0);
    return `| ${label} | ${cell("eligibility")} | ${cell("apply")} | ${cell("status")} | ${slice.length} | ${total} | ${writes} |`;
  }

  // 1. API requests per event, and event-to-Ready latency, through the real Broker.
  let publishToReadyMs = 0;
  let rolloutToObservedMs = 0;
  const apiRows = [
    await measure("publish (DynamoPoolRelay, then its DGD)", "g1", async () => {
      await admin.apply(dpr(ns, "g1"), MANAGER);
      await sleep(1000);
      const t = performance.now();
      await admin.apply(dgd(ns, "g1"), MANAGER);
      await until("g1 Ready", async () =>
        (await dprStatus("g1"))?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      publishToReadyMs = performance.now() - t;
    }),
    await measure("no-op (the DGD's last event again, new id)", "g1", () =>
      replay(lastEvent("DynamoGraphDeployment", "g1")),
    ),
    await measure("worker-namespace change (DGD rollout)", "g1", async () => {
      const t = performance.now();
      await rollout("g1", "g1");
      rolloutToObservedMs = performance.now() - t;
    }),
    // The same rollout of a DGD that a DynamoPoolRelay of another name selects by label (with a
    // second DGD): its change reaches the DynamoPoolRelay through the source; eligibility still
    // asks for the DGD's own name and finds none.
    await measure("publish (a selector over 2 DGDs, pool)", ["pool", "s1", "s2"], async () => {
      for (const name of ["s1", "s2"]) await admin.apply(labelled(dgd(ns, name)), MANAGER);
      const pool = dpr(ns, "pool");
      await admin.apply({ ...pool, spec: { ...(pool["spec"] as object), dgdSelector: SELECTOR } }, MANAGER);
      await until("pool Ready", async () =>
        (await dprStatus("pool"))?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
    }),
    await measure("worker-namespace change of a selected DGD (s1's rollout)", ["pool", "s1"], () =>
      rollout("s1", "pool"),
    ),
    // Shortcuts no burst meets, each beside the same kind of event without what it answers from
    // (docs/shortcuts.md): a name no DynamoPoolRelay can have, a payload showing its generation observed.
    await measure("a DGD no DynamoPoolRelay can be named for (g1.v1)", "g1.v1", () =>
      admin.apply(dgd(ns, "g1.v1"), MANAGER).then(() => undefined),
    ),
    await measure("a DGD with no DynamoPoolRelay (g2)", "g2", () =>
      admin.apply(dgd(ns, "g2"), MANAGER).then(() => undefined),
    ),
    await measure("the DynamoPoolRelay's update replayed, its generation observed", "g1", async () =>
      replay({ ...lastEvent("DynamoPoolRelay", "g1"), data: await liveDpr("g1") }),
    ),
    await measure("the same replayed without its status", "g1", async () =>
      replay({ ...lastEvent("DynamoPoolRelay", "g1"), data: { ...(await liveDpr("g1")), status: undefined } }),
    ),
  ];

  // 2. Cold start of each bundled function as a process here, with its ServiceAccount's rights.
  const dgdEvent = events.find((e) => e.extensions["kind"] === "DynamoGraphDeployment")!;
  const limitNotes = new Set<string>();
  const kubeconfigs = new Map<string, string>();
  for (const target of ["eligibility", "apply", "status"])
    kubeconfigs.set(target, await serviceAccountKubeconfig(cp, `poolrelay-${target}`));
  // The empty function calls no API: any of them.
  kubeconfigs.set("empty", kubeconfigs.get("eligibility")!);
  const reconcile = productEvent(
    EventType.Reconcile,
    { namespace: ns, name: "g1", cause: "DGDChanged" },
    { source: "/bench", cause: "c", time: now() },
  );
  // A resync of the same converged pair reads every child (a DGD change reads only the ConfigMap).
  const resync = productEvent(
    EventType.Reconcile,
    { namespace: ns, name: "g1", cause: "Resync" },
    { source: "/bench", cause: "c", time: now() },
  );
  const applied = productEvent(
    EventType.Applied,
    { namespace: ns, name: "g1", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] },
    { source: "/bench", cause: "c", time: now() },
  );
  // Two baselines: the empty function as the Functions Framework serves it (its own main, from
  // node_modules: the goal's), and the same function bundled and served as the product's are.
  await bundle("bench: empty function", {
    entryPoints: [`${root}bench/empty.mjs`],
    outdir: `${root}dist/bench/empty`,
    outExtension: { ".js": ".mjs" },
  });
  const cases: [string, string, string, CloudEvent, string?][] = [
    [
      "empty function, the Functions Framework's own main",
      "empty",
      `${root}bench/empty.mjs`,
      reconcile,
      `${root}node_modules/@google-cloud/functions-framework/build/src/main.js`,
    ],
    [
      "empty function, bundled and served as the functions are",
      "empty",
      `${root}dist/bench/empty/empty.mjs`,
      reconcile,
    ],
    ["eligibility (DGD event)", "eligibility", `${root}dist/functions/eligibility/index.mjs`, dgdEvent],
    ["apply (reconcile request, DGD changed)", "apply", `${root}dist/functions/apply/index.mjs`, reconcile],
    ["apply (reconcile request, resync)", "apply", `${root}dist/functions/apply/index.mjs`, resync],
    ["status (applied report)", "status", `${root}dist/functions/status/index.mjs`, applied],
  ];
  // Round-robin, so that the machine's speed drifting during the runs (the local stack keeps
  // working) weighs on every case alike, and the ratios to the empty function compare like with like.
  const samples = cases.map(() => [] as ColdStart[]);
  for (let i = 0; i < RUNS; i++) {
    for (const [c, [, target, source, event, main]] of cases.entries())
      samples[c]!.push(await coldStart(target, main ?? entry, source, event, kubeconfigs.get(target)!, limitNotes));
  }
  const coldRows: string[] = [];
  for (const [c, [label]] of cases.entries()) {
    const runs = samples[c]!;
    const statuses = [...new Set(runs.map((r) => r.status))].join("/");
    const ms = (r: (typeof runs)[number]) => r.listenMs + r.eventMs;
    const spread = (f: (r: (typeof runs)[number]) => number) =>
      `${Math.round(median(runs.map(f)))} (${Math.round(Math.min(...runs.map(f)))}–${Math.round(Math.max(...runs.map(f)))})`;
    const ratio = (baseline: number) => (median(runs.map(ms)) / median(samples[baseline]!.map(ms))).toFixed(2);
    coldRows.push(
      `| ${label} | ${spread((r) => r.listenMs)} | ${spread((r) => r.eventMs)} | ${spread(ms)} | ${ratio(0)} | ${ratio(1)} | ${Math.round(median(runs.map((r) => r.rssMb)))} | ${statuses} |`,
    );
  }

  // 3. Memory of the whole local stack: the control plane's processes and the node's, pods included.
  const byName = await stackMemory(admin, cp.pids);
  const totalRss = [...byName.values()].reduce((a, b) => a + b, 0);
  await tap.close();

  console.log(
    `\nLocal stack (profile node): control plane start to the product's Knative objects Ready: ${stackReadyS.toFixed(1)} s`,
  );
  console.log(
    `Event to Ready through the Broker: DGD created to its DynamoPoolRelay Ready (Relay pods Ready) ${Math.round(publishToReadyMs)} ms; DGD rollout to the new worker namespaces in status ${Math.round(rolloutToObservedMs)} ms`,
  );
  console.log(`\nKubernetes API requests per event, over the whole chain it sets off (invocations × reads / writes)\n`);
  console.log(
    "| scenario | eligibility | apply | status | invocations | requests | writes |\n|---|---|---|---|---|---|---|",
  );
  console.log(apiRows.join("\n"));
  const limit = limitNotes.size
    ? `no memory limit: ${[...limitNotes].join("; ")}`
    : `under the Services' memory limit, ${serviceMemoryLimit("eligibility").text}`;
  console.log(
    `\nCold start: spawn to listening, the first event to its answer (${RUNS} runs each, round-robin over the cases, median (range); Node ${process.version}; bundles from npm run build; ${limit})\n`,
  );
  console.log(
    "| function | spawn to listening, ms | first event, ms | in all, ms | in all, ratio to the framework's own | ratio to the bundled empty | RSS MB | HTTP status |\n|---|---|---|---|---|---|---|---|",
  );
  console.log(coldRows.join("\n"));
  console.log(`\nRSS of the whole local stack: ${Math.round(totalRss)} MB in ${byName.size} programs\n`);
  console.log("| program | RSS MB |\n|---|---|");
  console.log(
    [...byName]
      .sort((a, b) => b[1] - a[1])
      .map(([n, mb]) => `| ${n} | ${Math.round(mb)} |`)
      .join("\n"),
  );
} finally {
  await cp.stop();
}
