// npm run bench: on a local control plane with the real Knative Eventing and the product installed
// from knative/, measures (1) cold start of each bundled function next to an empty Functions
// Framework function, (2) Kubernetes API requests per event over the whole chain an event sets off,
// (3) event-to-Ready latency through the Broker, and (4) the memory of the whole local stack.
// Prints Markdown tables. Numbers are measurements of this machine, never assertions.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { fileURLToPath } from "node:url";
import { ensureBinaries } from "../dev/control-plane/binaries.ts";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { freePort } from "../dev/control-plane/ports.ts";
import { workloadStates } from "../dev/knative/index.ts";
import { installProduct, PRODUCT_NAMESPACE, productReadiness } from "../dev/product.ts";
import { startTap, tapTrigger } from "../dev/tap.ts";
import { bundle } from "../scripts/bundle.ts";
import { toBinary, type CloudEvent } from "../shared/cloudevent.ts";
import { EventType, productEvent } from "../shared/events.ts";
import type { KubeObject } from "../shared/kube/client.ts";
import { commandIn, memoryCgroup } from "./memory-cgroup.ts";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { functionLogs, namespaceWatched, procStatusMiB, since, sleep, until, type Invocation } from "./pipeline-support.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const MANAGER = "dynamo-pool-relay/bench";
const entry = `${root}dist/functions/main.mjs`;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const startedAt = performance.now();
const cp = await startControlPlane({ profile: "knative", ownerPid: process.pid });
try {
  const admin = cp.client;
  const objects = await installProduct(admin, ensureBinaries().kubectl, MANAGER);
  await until("the product's Knative objects Ready", async () => (await productReadiness(admin, objects)).every((r) => r.ready));
  const stackReadyS = (performance.now() - startedAt) / 1000;
  const events: CloudEvent[] = [];
  const tap = await startTap((e) => events.push(e));
  await admin.apply(tapTrigger("bench-tap", PRODUCT_NAMESPACE, "dynamo-pool-relay", tap.sink), MANAGER, { force: true });
  await until("the tap Trigger Ready", async () => (await productReadiness(admin, [tapTrigger("bench-tap", PRODUCT_NAMESPACE, "dynamo-pool-relay", tap.sink)])).every((r) => r.ready));

  const ns = "bench";
  await namespaceWatched(admin, cp.dir, ns, MANAGER);
  const dgd = (name: string): KubeObject => ({
    apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name, namespace: ns },
    spec: { components: [{ name: "decode", type: "decode" }] },
  });
  const dpr = (name: string): KubeObject => ({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name, namespace: ns }, spec: { image: "relay:1", clusterID: "bench" } });
  const dprStatus = async (name: string) => (await admin.get<{ status?: Record<string, any> }>({ apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", namespace: ns, name }))?.status;
  const logs = () => functionLogs(cp.dir);
  const count = () => [...logs().values()].reduce((n, l) => n + l.length, 0);
  const about = (name: string) => (i: Invocation) =>
    (i.key?.namespace === ns && JSON.stringify(i).includes(`"name":"${name}"`)) || ((i.event.subject ?? "").includes(`/namespaces/${ns}/`) && (i.event.subject ?? "").includes(name));

  /** Runs `act`, waits until no new invocation about the key for 2 s, and sums what it cost. */
  async function measure(label: string, name: string, act: () => Promise<void>): Promise<string> {
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
    const slice = since(cp.dir, before).filter(about(name));
    // BENCH_DETAIL=1: every invocation of the chain, to see which events cost what.
    if (process.env["BENCH_DETAIL"]) for (const l of slice) console.error(`  ${label.split(" ")[0]}: ${l.function} ${l.event.id.slice(0, 8)} ${l.event.type} ${l.event.subject ?? ""} ${l.decision ?? ""} ${l.reads}/${l.writes}`);
    const per = (fn: string) => slice.filter((l) => l.function === fn);
    const cell = (fn: string) => `${per(fn).length} × ${per(fn).reduce((n, l) => n + l.reads, 0)} / ${per(fn).reduce((n, l) => n + l.writes, 0)}`;
    const total = slice.reduce((n, l) => n + l.reads + l.writes, 0);
    const writes = slice.reduce((n, l) => n + l.writes, 0);
    return `| ${label} | ${cell("eligibility")} | ${cell("apply")} | ${cell("status")} | ${slice.length} | ${total} | ${writes} |`;
  }

  // 1. API requests per event, and event-to-Ready latency, through the real Broker.
  let publishToReadyMs = 0;
  let rolloutToObservedMs = 0;
  const apiRows = [
    await measure("publish (DynamoPoolRelay, then its DGD)", "g1", async () => {
      await admin.apply(dpr("g1"), MANAGER);
      await sleep(1000);
      const t = performance.now();
      await admin.apply(dgd("g1"), MANAGER);
      await until("g1 Ready", async () => (await dprStatus("g1"))?.["conditions"]?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True"));
      publishToReadyMs = performance.now() - t;
    }),
    await measure("no-op (the DGD's last event again, new id)", "g1", async () => {
      const last = events.filter((e) => e.extensions["kind"] === "DynamoGraphDeployment" && e.extensions["name"] === "g1").at(-1)!;
      const res = await fetch(`http://127.0.0.1:${workloadStates(cp.dir).find((w) => w.workload === "Deployment knative-eventing/mt-broker-ingress")!.ports["8080"]}/${PRODUCT_NAMESPACE}/dynamo-pool-relay`, { method: "POST", ...toBinary({ ...last, id: randomUUID(), time: now() }) });
      if (res.status !== 202) throw new Error(`the broker ingress answered ${res.status}`);
    }),
    await measure("worker-namespace change (DGD rollout)", "g1", async () => {
      const live = (await admin.get<KubeObject>({ apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", namespace: ns, name: "g1" }))!;
      const t = performance.now();
      await admin.replaceStatus({ ...live, status: { components: { decode: { componentNames: ["g1-decode-aaaa1111", "g1-decode-bbbb2222"] } } } });
      await until("the rollout observed", async () => (await dprStatus("g1"))?.["workerNamespaces"]?.length === 2);
      rolloutToObservedMs = performance.now() - t;
    }),
  ];

  // 2. Cold start: process spawn to listening (the port accepts connections), then the first
  // event to its answer, and RSS after it.
  const dgdEvent = events.find((e) => e.extensions["kind"] === "DynamoGraphDeployment")!;
  const accepts = (port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connectSocket(port, "127.0.0.1");
      socket.once("connect", () => (socket.destroy(), resolve(true)));
      socket.once("error", () => resolve(false));
    });
  const credentials = (target: string) => {
    const own = `${cp.dir}/workloads/sa.${PRODUCT_NAMESPACE}.poolrelay-${target}.kubeconfig`;
    return existsSync(own) ? own : cp.kubeconfig;
  };
  const limitNotes = new Set<string>();
  async function coldStart(target: string, source: string, event: CloudEvent, main = entry): Promise<{ listenMs: number; eventMs: number; rssMb: number; status: number }> {
    const port = await freePort();
    // Under the memory limit of the function's Service (the empty function: the functions' own),
    // as in its pod: V8 sizes its heap from it. The wrapping shell costs every case alike.
    const cgroup = memoryCgroup(serviceMemoryLimit(target === "empty" ? "eligibility" : target).bytes);
    if ("why" in cgroup) limitNotes.add(cgroup.why);
    const argv = [process.execPath, main, `--target=${target}`, `--source=${source}`, `--port=${port}`];
    const { command, args } = commandIn(cgroup, argv);
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        // As in its pod: the function's own ServiceAccount, from the kubeconfig the local kubelet
        // gives the running function (JSON, so no YAML parser loads, as with a mounted token).
        env: { ...process.env, KUBECONFIG: credentials(target), NODE_ENV: "production", K_SINK: "http://127.0.0.1:9/" },
        stdio: ["ignore", "ignore", "inherit"],
      });
    } catch (err) {
      if ("remove" in cgroup) cgroup.remove();
      throw err;
    }
    const exited = new Promise((r) => child.once("exit", r));
    const started = performance.now();
    try {
      while (!(await accepts(port))) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${target} exited before it listened (${child.exitCode ?? child.signalCode})`);
        await sleep(2);
      }
      const listening = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", ...toBinary(event) });
      await res.arrayBuffer();
      const rss = procStatusMiB(child.pid!, "VmRSS")!;
      return { listenMs: listening - started, eventMs: performance.now() - listening, rssMb: rss, status: res.status };
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      if ("remove" in cgroup) cgroup.remove();
    }
  }
  const reconcile = productEvent(EventType.Reconcile, { namespace: ns, name: "g1", cause: "DGDChanged" }, { source: "/bench", cause: "c", time: now() });
  // A resync of the same converged pair reads every child (a DGD change reads only the ConfigMap).
  const resync = productEvent(EventType.Reconcile, { namespace: ns, name: "g1", cause: "Resync" }, { source: "/bench", cause: "c", time: now() });
  const applied = productEvent(EventType.Applied, { namespace: ns, name: "g1", uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/bench", cause: "c", time: now() });
  // Two baselines: the empty function as the Functions Framework serves it (its own main, from
  // node_modules: the goal's), and the same function bundled and served as the product's are.
  await bundle("bench: empty function", { entryPoints: [`${root}bench/empty.mjs`], outdir: `${root}dist/bench/empty`, outExtension: { ".js": ".mjs" } });
  const cases: [string, string, string, CloudEvent, string?][] = [
    ["empty function, the Functions Framework's own main", "empty", `${root}bench/empty.mjs`, reconcile, `${root}node_modules/@google-cloud/functions-framework/build/src/main.js`],
    ["empty function, bundled and served as the functions are", "empty", `${root}dist/bench/empty/empty.mjs`, reconcile],
    ["eligibility (DGD event)", "eligibility", `${root}dist/functions/eligibility/index.mjs`, dgdEvent],
    ["apply (reconcile request, DGD changed)", "apply", `${root}dist/functions/apply/index.mjs`, reconcile],
    ["apply (reconcile request, resync)", "apply", `${root}dist/functions/apply/index.mjs`, resync],
    ["status (applied report)", "status", `${root}dist/functions/status/index.mjs`, applied],
  ];
  // Round-robin, so that the machine's speed drifting during the runs (the local stack keeps
  // working) weighs on every case alike, and the ratios to the empty function compare like with like.
  const samples = cases.map(() => [] as Awaited<ReturnType<typeof coldStart>>[]);
  for (let i = 0; i < RUNS; i++) {
    for (const [c, [, target, source, event, main]] of cases.entries()) samples[c]!.push(await coldStart(target, source, event, main));
  }
  const coldRows: string[] = [];
  for (const [c, [label]] of cases.entries()) {
    const runs = samples[c]!;
    const statuses = [...new Set(runs.map((r) => r.status))].join("/");
    const ms = (r: (typeof runs)[number]) => r.listenMs + r.eventMs;
    const spread = (f: (r: (typeof runs)[number]) => number) => `${Math.round(median(runs.map(f)))} (${Math.round(Math.min(...runs.map(f)))}–${Math.round(Math.max(...runs.map(f)))})`;
    const ratio = (baseline: number) => (median(runs.map(ms)) / median(samples[baseline]!.map(ms))).toFixed(2);
    coldRows.push(`| ${label} | ${spread((r) => r.listenMs)} | ${spread((r) => r.eventMs)} | ${spread(ms)} | ${ratio(0)} | ${ratio(1)} | ${Math.round(median(runs.map((r) => r.rssMb)))} | ${statuses} |`);
  }

  // 3. Memory of the whole local stack: every process in the control plane's process groups.
  const groups = new Set(cp.pids);
  const byName = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (!groups.has(pgrp)) continue;
      const rss = procStatusMiB(Number(pid), "VmRSS") ?? 0;
      const name = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).map((a) => a.split("/").pop()).slice(0, 2).join(" ").slice(0, 60);
      byName.set(name, (byName.get(name) ?? 0) + rss);
    } catch {
      // Gone meanwhile.
    }
  }
  const totalRss = [...byName.values()].reduce((a, b) => a + b, 0);
  await tap.close();

  console.log(`\nLocal stack with Knative: control plane start to the product's Knative objects Ready: ${stackReadyS.toFixed(1)} s`);
  console.log(`Event to Ready through the Broker: DGD created to its DynamoPoolRelay Ready (Relay pods Ready) ${Math.round(publishToReadyMs)} ms; DGD rollout to the new worker namespaces in status ${Math.round(rolloutToObservedMs)} ms`);
  console.log(`\nKubernetes API requests per event, over the whole chain it sets off (invocations × reads / writes)\n`);
  console.log("| scenario | eligibility | apply | status | invocations | requests | writes |\n|---|---|---|---|---|---|---|");
  console.log(apiRows.join("\n"));
  const limit = limitNotes.size ? `no memory limit: ${[...limitNotes].join("; ")}` : `under the Services' memory limit, ${serviceMemoryLimit("eligibility").text}`;
  console.log(`\nCold start: spawn to listening, the first event to its answer (${RUNS} runs each, round-robin over the cases, median (range); Node ${process.version}; bundles from npm run build; ${limit})\n`);
  console.log("| function | spawn to listening, ms | first event, ms | in all, ms | in all, ratio to the framework's own | ratio to the bundled empty | RSS MB | HTTP status |\n|---|---|---|---|---|---|---|---|");
  console.log(coldRows.join("\n"));
  console.log(`\nRSS of the whole local stack: ${Math.round(totalRss)} MB in ${byName.size} programs\n`);
  console.log("| program | RSS MB |\n|---|---|");
  console.log([...byName].sort((a, b) => b[1] - a[1]).map(([n, mb]) => `| ${n} | ${Math.round(mb)} |`).join("\n"));
} finally {
  await cp.stop();
}
