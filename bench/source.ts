// npm run bench:source: what the event source costs with converged pairs, on the local control
// plane (profile api: no controller changes what the bench writes), the bundled source as a real
// process under its Deployment's memory limit (knative/source.yaml), its events sent to a local sink
// that answers as the Broker's ingress does. Prints:
//   1. its memory: RSS and V8 heap once its lists are judged, with no pair, with SOURCE_PAIRS_SMALL
//      (default 1,000) and SOURCE_PAIRS (default 10,000) converged pairs, and the growth per pair;
//   2. a restart over those pairs, some of them changed while no source ran (Deployments scaled to
//      0, RoleBindings deleted, Relay pods lost): the events it sends (one reconcile request for each
//      changed pair, none for the others) and its API requests beyond the lists and watches;
//   3. its own API requests an idle minute while it leads (the Lease's renewals, the watches'
//      renewals), per 1,000 pairs.
// Each pair is what the product leaves: its six children server-side applied by apply's field
// manager as rendered, the Deployment's status with two pods Ready, an EndpointSlice with two ready
// endpoints, the status the core computes from them.
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { freePort } from "../dev/control-plane/ports.ts";
import { desiredChildren } from "../shared/apply-plan.ts";
import { settleBounded } from "../shared/concurrency.ts";
import { parseConfig } from "../shared/config.ts";
import { EventType } from "../shared/events.ts";
import { decide, type Decision } from "../shared/decide.ts";
import type { KubeClient, KubeObject } from "../shared/kube/client.ts";
import { APPLY_FIELD_MANAGER } from "../shared/names.ts";
import { planStatus } from "../shared/status-plan.ts";
import { memoryCgroup, commandIn, memoryLimitBytes } from "./memory-cgroup.ts";
import { knativeDocs, resyncSettings } from "./knative-settings.ts";
import { LIST_PAGE } from "../functions/source/informer.ts";
import { PAGE } from "../functions/eligibility/handler.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const SMALL = Number(process.env["SOURCE_PAIRS_SMALL"] ?? 1_000);
const LARGE = Number(process.env["SOURCE_PAIRS"] ?? 10_000);
/** Pairs changed while no source runs, of each kind of change. */
const CHANGED = Number(process.env["SOURCE_CHANGED"] ?? 10);
const PER_NAMESPACE = 100;
const MANAGER = "dynamo-pool-relay/bench";
/** How long the source is given, once Ready, to judge its pairs and ask for what it finds changed. */
const SETTLE_MS = Number(process.env["SOURCE_SETTLE_S"] ?? 40) * 1000;
const IDLE_MS = Number(process.env["SOURCE_IDLE_S"] ?? 120) * 1000;
const settings = parseConfig({}).defaults;
/** The kinds the source watches (functions/source/main.ts). */
const WATCHED_KINDS = 9;
/** A periodic reconcile of a converged pair: apply's reads, no write (npm run bench:scale). */
const PERIODIC_READS = 9;
/** The event source's REQUEUE_SECONDS, as knative/source.yaml sets it. */
const REQUEUE_S = 60;
const DGD_SPEC = {
  backendFramework: "vllm",
  components: [
    { name: "Frontend", type: "frontend" },
    { name: "decode", type: "decode", replicas: 1 },
  ],
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sourceDeployment = knativeDocs("source.yaml").find((d) => d.kind === "Deployment")!;
const sourceContainer = sourceDeployment.spec.template!.spec.containers[0]!;
const limitBytes = memoryLimitBytes(sourceContainer)!;
const stopping = new Set<() => Promise<void>>();
/** Where each source process's log goes, kept after the run. */
const LOG_DIR = mkdtempSync(join(tmpdir(), "poolrelay-bench-source-"));
console.error(`[bench:source] the source's logs: ${LOG_DIR}`);

const cp = await startControlPlane({ profile: "api", ownerPid: process.pid, log: () => {} });
const admin = cp.client;
try {
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "dynamo-system" } }, MANAGER);
  const sink = await countingSink();

  const empty = await measured("no pair", sink);
  let t = performance.now();
  await makePairs(admin, 0, SMALL);
  const smallMs = performance.now() - t;
  const small = await measured(`${SMALL.toLocaleString("en")} pairs`, sink);
  t = performance.now();
  await makePairs(admin, SMALL, LARGE);
  const largeMs = performance.now() - t;
  const large = await measured(`${LARGE.toLocaleString("en")} pairs`, sink, async (source) => {
    // Changed while no source runs: scaled down, unbound, pods lost.
    await source.stop();
    const keys = Array.from({ length: LARGE }, (_, i) => keyOf(i));
    const pick = (n: number, offset: number) =>
      keys.filter((_, i) => i % Math.floor(LARGE / CHANGED) === offset).slice(0, n);
    for (const k of pick(CHANGED, 1))
      await admin.request(
        "PATCH",
        `/apis/apps/v1/namespaces/${k.namespace}/deployments/${k.name}-pool-relay`,
        { spec: { replicas: 0 } },
        "application/merge-patch+json",
      );
    for (const k of pick(CHANGED, 2))
      await admin.request(
        "DELETE",
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${k.namespace}/rolebindings/${k.name}-pool-relay`,
      );
    for (const k of pick(CHANGED, 3))
      await admin.request(
        "PATCH",
        `/apis/apps/v1/namespaces/${k.namespace}/deployments/${k.name}-pool-relay/status`,
        { status: { readyReplicas: 0, availableReplicas: 0 } },
        "application/merge-patch+json",
      );
    return 3 * CHANGED;
  });

  const perPair = (a: Memory, b: Memory, n: number) => ({
    rss: (b.rss - a.rss) / n,
    heap: (b.heapUsed - a.heapUsed) / n,
  });
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;
  const n = (x: number) => x.toLocaleString("en");
  console.log(
    `\nThe event source (dist/functions/source.mjs) under its Deployment's memory limit (${sourceContainer.resources!.limits!.memory}), profile api, pairs in namespaces of ${PER_NAMESPACE}; made in ${(smallMs / 1000).toFixed(0)} s and ${(largeMs / 1000).toFixed(0)} s\n`,
  );
  console.log(`| | no pair | ${n(SMALL)} pairs | ${n(LARGE)} pairs |\n|---|---|---|---|`);
  const parts = (m: Memory) => `${mib(m.heapTotal)} / ${mib(m.external)}`;
  console.log(
    `| V8 heap committed / external memory, after a full collection | ${parts(empty.collected)} | ${parts(small.collected)} | ${parts(large.collected)} |`,
  );
  const rows = [
    [`as held, ${SETTLE_MS / 1000} s after Ready`, (m: Measured) => m.held],
    [`as held, ${(SETTLE_MS + IDLE_MS) / 1000} s after Ready (idle since)`, (m: Measured) => m.idled],
    ["after a full collection", (m: Measured) => m.collected],
  ] as const;
  for (const [what, of] of rows) {
    console.log(
      `| RSS / V8 heap used, ${what} | ${mib(of(empty).rss)} / ${mib(of(empty).heapUsed)} | ${mib(of(small).rss)} / ${mib(of(small).heapUsed)} | ${mib(of(large).rss)} / ${mib(of(large).heapUsed)} |`,
    );
    const [a, b] = [perPair(of(empty), of(small), SMALL), perPair(of(empty), of(large), LARGE)];
    console.log(
      `| growth a pair from no pair, ${what}: RSS / heap | | ${kib(a.rss)} / ${kib(a.heap)} | ${kib(b.rss)} / ${kib(b.heap)} |`,
    );
    const m = perPair(of(small), of(large), LARGE - SMALL);
    console.log(
      `| growth a pair from ${n(SMALL)} to ${n(LARGE)}, ${what}: RSS / heap | | | ${kib(m.rss)} / ${kib(m.heap)} |`,
    );
  }
  console.log(`| peak RSS (VmHWM) | ${mib(empty.peak)} | ${mib(small.peak)} | ${mib(large.peak)} |`);
  console.log(
    `| start to Ready (every kind listed) | ${empty.readyS.toFixed(1)} s | ${small.readyS.toFixed(1)} s | ${large.readyS.toFixed(1)} s |`,
  );
  console.log(
    `| first start: events sent / reconcile requests; API requests beyond lists and watches (rereads, the Lease) | ${empty.first.events} / ${empty.first.requeues}; ${empty.first.beyond} | ${small.first.events} / ${small.first.requeues}; ${small.first.beyond} | ${large.first.events} / ${large.first.requeues}; ${large.first.beyond} |`,
  );
  const r = large.restart!;
  console.log(
    `| restart, ${r.changed} pairs changed while it was down: events sent / reconcile requests / pairs asked for (again ${REQUEUE_S / 2} s later when nothing acts); API requests beyond lists and watches, a pair | | | ${r.events} / ${r.requeues} / ${r.pairs}; ${r.beyond} (${(r.beyond / LARGE).toFixed(4)}) |`,
  );
  const idlePerS = large.idle.requests / (IDLE_MS / 1000);
  console.log(
    `| its API requests an idle second while leading (${IDLE_MS / 1000} s: the Lease's renewals, the watches' renewals) | | | ${idlePerS.toFixed(3)}/s |`,
  );
  // An idle second per 1,000 converged pairs, all the product's parts: the source as measured, its
  // relist (every kind, a page per 250 objects, every SOURCE_RELIST_SECONDS) and the resync (each
  // tick a Table page per 500 pairs and a periodic reconcile, 9 reads, of one slot of them).
  const relistS = Number(sourceContainer.env!.find((e) => e.name === "SOURCE_RELIST_SECONDS")!.value);
  const { ticksPerHour, slots } = resyncSettings();
  const perThousand = {
    source: idlePerS,
    relist: (WATCHED_KINDS * Math.ceil(1000 / LIST_PAGE)) / relistS,
    resync: (ticksPerHour * (Math.ceil(1000 / PAGE) + (1000 / slots) * PERIODIC_READS)) / 3600,
  };
  const total = perThousand.source + perThousand.relist + perThousand.resync;
  console.log(
    `\nAn idle second at 1,000 converged pairs: ${total.toFixed(2)} API requests: the source ${perThousand.source.toFixed(3)} (measured), its relist ${perThousand.relist.toFixed(3)} (${WATCHED_KINDS} kinds, a page per ${LIST_PAGE}, every ${relistS} s), the resync ${perThousand.resync.toFixed(3)} (${ticksPerHour} ticks an hour, a page per ${PAGE}, ${(1000 / slots).toFixed(1)} periodic reconciles of ${PERIODIC_READS} reads each)`,
  );
  const growth = perPair(small.held, large.held, LARGE - SMALL);
  const at = (pairs: number) => small.held.rss + growth.rss * (pairs - SMALL);
  console.log(
    `\n100,000 pairs on paper, at the growth from ${n(SMALL)} to ${n(LARGE)} as held ${SETTLE_MS / 1000} s after Ready: ${mib(at(100_000))} of RSS (${mib(small.held.heapUsed + growth.heap * (100_000 - SMALL))} of heap); peak over held at ${n(LARGE)}: ${mib(large.peak - large.held.rss)}`,
  );
} finally {
  for (const stop of [...stopping]) await stop();
  await cp.stop();
}

interface Run {
  events: number;
  requeues: number;
  /** The pairs asked for. */
  pairs: number;
  beyond: number;
  changed?: number;
}
interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}
interface Measured {
  /** As the pod holds it after the settle period, after the idle period, and after a full collection. */
  held: Memory;
  idled: Memory;
  collected: Memory;
  peak: number;
  readyS: number;
  idle: { requests: number };
  first: Run;
  restart?: Run;
}

function memoryOf(s: Record<string, unknown>): Memory {
  return {
    rss: Number(s["rss"]),
    heapUsed: Number(s["heapUsed"]),
    heapTotal: Number(s["heapTotal"]),
    external: Number(s["external"]),
  };
}

/**
 * Starts the source over what the cluster holds, lets it settle, and reads its memory; with
 * `between`, measures its idle requests, stops it, lets `between` change the cluster, and starts
 * it again over the changes.
 */
async function measured(what: string, sink: Sink, between?: (source: Source) => Promise<number>): Promise<Measured> {
  console.error(`[bench:source] ${what}: starting the source`);
  let source = await startSource(sink);
  const first = await settle(source, sink);
  const held = await source.stats(false);
  // Idle: what it asks of the API server, and holds, while nothing changes (V8 gives back what a
  // list left committed only once the process is idle for a while).
  await sleep(IDLE_MS);
  const after = await source.stats(false);
  const idle = {
    requests: Number(after["reads"]) + Number(after["writes"]) - Number(held["reads"]) - Number(held["writes"]),
  };
  const collected = await source.stats(true);
  const base = {
    held: memoryOf(held),
    idled: memoryOf(after),
    collected: memoryOf(collected),
    peak: Number(collected["peak"]),
    readyS: source.readyS,
    idle,
    first,
  };
  if (!between) {
    await source.stop();
    return base;
  }
  const changed = await between(source);
  console.error(`[bench:source] ${what}: ${changed} pairs changed while the source was down; starting it again`);
  source = await startSource(sink);
  const restart = { ...(await settle(source, sink)), changed };
  await source.stop();
  return { ...base, restart };
}

/** Waits out the settle period after Ready: the events and requeues of the run, and its requests beyond lists and watches. */
async function settle(source: Source, sink: Sink): Promise<Run> {
  const events = sink.received;
  sink.asked.clear();
  await sleep(SETTLE_MS);
  const s = await source.stats(false);
  return {
    events: sink.received - events,
    requeues: Number(s["asked"]),
    pairs: sink.asked.size,
    beyond: Number(s["reads"]) - Number(s["listPages"]) - Number(s["watches"]) + Number(s["writes"]),
  };
}

interface Source {
  stop(): Promise<void>;
  /** Its stats, after a full collection when `gc`. */
  stats(gc: boolean): Promise<Record<string, unknown>>;
  readyS: number;
}

async function startSource(sink: Sink): Promise<Source> {
  const port = await freePort();
  const limit = memoryCgroup(limitBytes);
  const { command, args } = commandIn(limit, [process.execPath, "--expose-gc", `${root}dist/functions/source.mjs`]);
  const started = performance.now();
  const child = spawn(command, args, {
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfig,
      NODE_ENV: "production",
      K_SINK: sink.url,
      PORT: String(port),
      POD_NAME: `bench-${port}`,
      POD_NAMESPACE: "dynamo-system",
      SOURCE_RELIST_SECONDS: "0",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  const stop = async () => {
    stopping.delete(stop);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    if ("remove" in limit) limit.remove();
  };
  stopping.add(stop);
  let ready!: () => void;
  const readyNow = new Promise<void>((r) => (ready = r));
  const logFile = join(LOG_DIR, `source-${port}.log`);
  createInterface({ input: child.stdout }).on("line", (line) => {
    appendFileSync(logFile, `${line}\n`);
    if ((JSON.parse(line) as Record<string, unknown>)["msg"] === "ready") ready();
  });
  await Promise.race([
    readyNow,
    exited.then(() =>
      Promise.reject(new Error(`the source exited before it was Ready (${child.exitCode ?? child.signalCode})`)),
    ),
  ]);
  const readyS = (performance.now() - started) / 1000;
  return {
    stop,
    readyS,
    stats: async (gc) =>
      (await (await fetch(`http://127.0.0.1:${port}/statsz${gc ? "?gc" : ""}`)).json()) as Record<string, unknown>,
  };
}

interface Sink {
  url: string;
  received: number;
  /** The pairs reconcile requests named. */
  asked: Set<string>;
}

/** Answers 202 as the Broker's ingress does, and counts the events and the pairs reconcile requests name. */
async function countingSink(): Promise<Sink> {
  const sink = { received: 0, asked: new Set<string>() };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      sink.received++;
      if (req.headers["ce-type"] === EventType.Reconcile) {
        const { namespace, name } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          namespace: string;
          name: string;
        };
        sink.asked.add(`${namespace}/${name}`);
      }
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  stopping.add(() => Promise.resolve(void server.close()));
  return Object.assign(sink, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
}

function keyOf(i: number): { namespace: string; name: string } {
  return { namespace: `src-${Math.floor(i / PER_NAMESPACE)}`, name: `p${i % PER_NAMESPACE}` };
}

/** Pairs [from, to), converged as the product leaves them. */
async function makePairs(kube: KubeClient, from: number, to: number): Promise<void> {
  const keys = Array.from({ length: to - from }, (_, i) => keyOf(from + i));
  for (const ns of new Set(keys.map((k) => k.namespace)))
    await kube.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }, MANAGER);
  const made = await settleBounded(keys, 32, (key) => makePair(kube, key));
  if (made.failures.length)
    throw new Error(`${made.failures.length} pairs not made: ${String(made.failures[0]!.error)}`);
  console.error(`[bench:source] ${to} pairs`);
}

async function makePair(kube: KubeClient, { namespace, name }: { namespace: string; name: string }): Promise<void> {
  const dgd = await kube.apply<KubeObject>(
    { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { namespace, name }, spec: DGD_SPEC },
    MANAGER,
  );
  const dpr = await kube.apply<KubeObject>(
    {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { namespace, name },
      spec: { image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0", clusterID: "bench" },
    },
    MANAGER,
  );
  const decision = decide(dpr, dgd, settings) as Extract<Decision, { action: "apply" }>;
  const live = await Promise.all(
    desiredChildren(decision).map((c) => kube.apply<KubeObject>(c, APPLY_FIELD_MANAGER, { force: true })),
  );
  const byKind = (kind: string) => live.find((c) => c.kind === kind)!;
  const deployment = await kube.replaceStatus<KubeObject>({
    ...byKind("Deployment"),
    status: {
      observedGeneration: byKind("Deployment").metadata["generation"],
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    },
  });
  const service = byKind("Service");
  const slice = await kube.create<KubeObject>({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      namespace,
      name: `${name}-pool-relay-x7k2p`,
      labels: {
        ...(service.metadata["labels"] as Record<string, string>),
        "kubernetes.io/service-name": `${name}-pool-relay`,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name: service.metadata.name,
          uid: service.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType: "IPv4",
    endpoints: [0, 1].map((i) => ({
      addresses: [`10.244.${i}.${(namespace.length + name.length) % 250}`],
      conditions: { ready: true, serving: true, terminating: false },
    })),
    ports: [{ name: "grpc", port: 5561, protocol: "TCP" }],
  });
  const observed = {
    serviceAccount: byKind("ServiceAccount"),
    role: byKind("Role"),
    roleBinding: byKind("RoleBinding"),
    configMap: byKind("ConfigMap"),
    deployment: deployment as never,
    service,
    endpointSlices: [slice as never],
  };
  const { status } = planStatus({
    dpr: dpr,
    decision,
    observed: observed,
    changed: [],
    now: new Date().toISOString(),
  });
  await kube.replaceStatus({ ...dpr, status });
}
