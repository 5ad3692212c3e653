// npm run bench:pipeline: PIPELINE_PAIRS (default 1,000) DGD/DynamoPoolRelay pairs created at once
// on the local control plane with a real node (Knative Serving and Eventing as pods) and the
// product installed from knative/ (the DynamoPoolRelays, then the DGDs, 32 requests at once),
// converged through the event pipeline until every DynamoPoolRelay is Ready with its Relay pods
// (on kwok nodes added for them, no process in them), or PIPELINE_WAIT_S (600) have passed;
// then, in a namespace of its own, the same six children of each pair taken by the API server
// alone with server-side apply, 32 at once: its physical limit here, and how long the cluster
// itself then takes to make each pair Ready (Relay pods scheduled, available, behind the Service).
// Prints the times, their ratios, what the pipeline cost (invocations, API reads and writes, per
// pair, counted until no event has entered the Broker for 15 s), the changes lost on the way to
// the Broker (an independent watch against a tap on it, bench/lost-changes.ts), the CPU time of
// every pod on the real node, and the memory of the functions' pods. Exits 1 when a pair is not
// Ready when the wait ends.
import { fakeNode } from "../dev/control-plane/index.ts";
import { allInvocationsByPod, PRODUCT_FUNCTIONS, type Invocation } from "../dev/node/product-observed.ts";
import { PRODUCT_NAMESPACE } from "../dev/product.ts";
import { startTap, tapTrigger } from "../dev/tap.ts";
import { BROKER, startProductCluster } from "../dev/node/product-cluster.ts";
import { settleBounded } from "../shared/concurrency.ts";
import { ApiError } from "../shared/kube/errors.ts";
import { EventType } from "../shared/events.ts";
import { sampleFunctionMemory } from "./function-memory.ts";
import { serviceMemoryLimit } from "./memory-limit.ts";
import { buildClassic, startClassic } from "./classic.ts";
import { podsCpuSeconds } from "./cpu.ts";
import { cpuByName, processCpu } from "./process-cpu.ts";
import { lostChanges, tap } from "./lost-changes.ts";
import {
  ALONE_SELECTOR,
  childrenAlone,
  dgd,
  dpr,
  namespaceWatched,
  readyAlone,
  since,
  sleep,
  until,
  watchChanges,
} from "./pipeline-support.ts";

const PAIRS = Number(process.env["PIPELINE_PAIRS"] ?? 1000);
const AT_ONCE = 32;
const MANAGER = "dynamo-pool-relay/bench";
/** Relay pods per kwok node: the node's pod capacity less room for what else runs there. */
const PODS_PER_NODE = 200;
/** kwok nodes for one set of 2 Relay pods a pair. */
const NODES = Math.ceil((2 * PAIRS) / PODS_PER_NODE);
const names = Array.from({ length: PAIRS }, (_, i) => `g${i}`);

/**
 * Whether the API server, busy with the burst, left a request unanswered: no answer within the
 * client's 10 s, or its HTTP/2 stream ended with the session the client then dropped.
 */
const unanswered = (err: unknown) =>
  err instanceof ApiError && (err.reason === "Timeout" || err.reason === "NetworkError");
/** Writes left unanswered, sent again (each write here is an apply: the same again is harmless). */
let resent = 0;
const ATTEMPTS = 3;

/** A request the busy cluster may fail for a while (Knative's webhook unreachable, a 5xx): tried again for a minute. */
async function persist<T>(what: string, request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      const transient = err instanceof ApiError && (err.status >= 500 || err.status === 0 || err.status === 429);
      if (!transient || attempt >= 30) throw new Error(`${what}: ${String(err)}`, { cause: err });
      await sleep(2000);
    }
  }
}

async function all<T>(what: string, items: readonly T[], write: (item: T) => Promise<unknown>): Promise<void> {
  const again = async (item: T): Promise<unknown> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write(item);
      } catch (err) {
        if (!unanswered(err) || attempt >= ATTEMPTS) throw err;
        resent++;
      }
    }
  };
  const { failures } = await settleBounded(items, AT_ONCE, again);
  if (failures.length)
    throw new Error(`${failures.length} of ${items.length} ${what} failed; the first: ${String(failures[0]!.error)}`);
}

// Built before the cluster starts: a cold build of controller-runtime takes minutes of both cores.
const classicBinary = await buildClassic();
const cp = await startProductCluster({ fieldManager: MANAGER });

type Condition = { type: string; status: string; reason?: string; lastTransitionTime?: string };
type Listed = { metadata: { name: string; creationTimestamp?: string }; status?: { conditions?: Condition[] } };
const condition = (d: Listed, type: string) =>
  d.status?.conditions?.find((c) => c.type === type && c.status === "True");
const waitMs = Number(process.env["PIPELINE_WAIT_S"] ?? 600) * 1000;
/** The resync's period (knative/pingsource.yaml, every tenth minute): its ticks fall on these marks of the clock. */
const RESYNC_PERIOD_MS = 600_000;
/**
 * How long the burst needs free of a resync tick (PIPELINE_TICK_FREE_S): a tick asks for every
 * unconverged pair and a third of the rest, so a burst it falls into costs that much more, and
 * one run's numbers could not be set beside another's. The burst waits for the next tick when
 * fewer seconds than this are left before it.
 */
const tickFreeMs = Number(process.env["PIPELINE_TICK_FREE_S"] ?? 480) * 1000;

/**
 * The namespace's DynamoPoolRelays once every one is Ready, or as they are PIPELINE_WAIT_S after
 * `started`; what is not Ready by then is named by the caller.
 */
async function allReady(ns: string, started: number): Promise<Listed[]> {
  let listed: Listed[] = [];
  await until(
    `all ${PAIRS} DynamoPoolRelays in ${ns} Ready`,
    async () => {
      try {
        listed = await cp.client.list<Listed>("nvidia.com/v1alpha1", "DynamoPoolRelay", ns);
      } catch (err) {
        // Unanswered: the next poll asks again.
        if (unanswered(err)) return false;
        throw err;
      }
      return (
        (listed.length === PAIRS && listed.every((d) => condition(d, "Ready"))) || performance.now() - started > waitMs
      );
    },
    waitMs + 60_000,
    1000,
  );
  return listed;
}

/** When each DynamoPoolRelay's condition `type` turned True, in seconds from the first create (the API server's times), sorted. */
function transitions(listed: readonly Listed[], type: string): number[] {
  const first = Math.min(...listed.map((d) => Date.parse(d.metadata.creationTimestamp!)));
  return listed
    .flatMap((d) => (condition(d, type) ? [(Date.parse(condition(d, type)!.lastTransitionTime!) - first) / 1000] : []))
    .sort((a, b) => a - b);
}
try {
  const admin = cp.client;
  // Tainted, as the control plane's own beside a real node: only the Relay pods (FAKE_NODE_PLACEMENT) go there.
  for (let i = 1; i <= NODES; i++) await admin.apply(fakeNode(`kwok-node-${i}`, true), MANAGER, { force: true });
  const memory = sampleFunctionMemory(admin);

  // 1. Through the event pipeline.
  const ns = "pipeline";
  await namespaceWatched(admin, ns, MANAGER);
  // What the sources should send, watched independently, and what reached the Broker: a tap with
  // retries of its own, so that a tap busy in the burst does not count as a lost change.
  const stopWatching = new AbortController();
  const changes = watchChanges(admin, ns, stopWatching.signal);
  await changes.watching;
  const tapped = new Map<string, string>();
  let lastTapped = performance.now();
  let tappedEvents = 0;
  const brokerTap = await startTap((e) => {
    tappedEvents++;
    lastTapped = performance.now();
    tap(tapped, e);
  }, cp.hostAddress);
  const tapName = "bench-tap";
  await persist(`creating Trigger ${tapName}`, () =>
    admin.apply(
      {
        ...tapTrigger(tapName, PRODUCT_NAMESPACE, BROKER, brokerTap.sink),
        spec: {
          broker: BROKER,
          filter: {},
          subscriber: { uri: brokerTap.sink },
          delivery: { retry: 10, backoffPolicy: "exponential", backoffDelay: "PT0.2S", timeout: "PT10S" },
        },
      },
      MANAGER,
      { force: true },
    ),
  );
  await until(
    `Trigger ${tapName} Ready`,
    async () => {
      const t = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>({
        apiVersion: "eventing.knative.dev/v1",
        kind: "Trigger",
        namespace: PRODUCT_NAMESPACE,
        name: tapName,
      });
      return t?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    },
    120_000,
    500,
  );
  const toTick = RESYNC_PERIOD_MS - (Date.now() % RESYNC_PERIOD_MS);
  if (toTick < tickFreeMs) {
    console.log(
      `waiting ${Math.round(toTick / 1000) + 20} s for the resync tick to pass before the burst (PIPELINE_TICK_FREE_S ${tickFreeMs / 1000})`,
    );
    await sleep(toTick + 20_000);
  }
  cp.podLogs.sweep();
  const before = allInvocationsByPod(cp.logs);
  const cpuBefore = podsCpuSeconds();
  const machineBefore = processCpu();
  const started = performance.now();
  await all("DynamoPoolRelays", names, (name) => admin.apply(dpr(ns, name), MANAGER));
  await all("DGDs", names, (name) => admin.apply(dgd(ns, name), MANAGER));
  const createdS = (performance.now() - started) / 1000;
  const pipelineResent = resent;
  const listed = await allReady(ns, started);
  const after = (type: string) => transitions(listed, type);
  const readyAt = after("Ready");
  const publishedAt = after("ServicePublished");
  const notReady = listed
    .filter((d) => !condition(d, "Ready"))
    .map((d) => `${d.metadata.name} (${d.status?.conditions?.find((c) => c.type === "Ready")?.reason ?? "no status"})`);
  const pipelineCpuS = podsCpuSeconds() - cpuBefore;
  const pipelineMachine = cpuByName(machineBefore, processCpu());
  // Until the Broker is idle (nothing entered it for 15 s): what the burst cost in all.
  await until("the Broker idle for 15 s", () => performance.now() - lastTapped > 15_000, 600_000, 1000);
  const idleAfterS = (lastTapped - started) / 1000;
  stopWatching.abort();
  const lost = lostChanges(changes.last.values(), tapped);
  await persist(`deleting Trigger ${tapName}`, () =>
    admin.request("DELETE", `/apis/eventing.knative.dev/v1/namespaces/${PRODUCT_NAMESPACE}/triggers/${tapName}`),
  );
  await brokerTap.close();
  cp.podLogs.sweep();
  const invocations = since(cp.logs, before);

  // 2. The API server alone: the same children, rendered offline, applied.
  const ssa = "ssa-only";
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ssa } }, MANAGER);
  const children = names.flatMap((name) => childrenAlone(ssa, name));
  // Room for their Relay pods, and a watch that sees when each pair is Ready as the product's
  // status would call it: what the cluster itself takes (controllers, scheduler, kwok) past the writes.
  for (let i = NODES + 1; i <= 2 * NODES; i++)
    await admin.apply(fakeNode(`kwok-node-${i}`, true), MANAGER, { force: true });
  const alone = readyAlone(admin, ALONE_SELECTOR, PAIRS, waitMs);
  await Promise.race([alone.watching, alone.ready]); // a watch refused before it started fails the bench here, not by hanging
  const ssaStarted = performance.now();
  await all("server-side applies", children, (child) => admin.apply(child, MANAGER));
  const ssaS = (performance.now() - ssaStarted) / 1000;
  const ssaResent = resent - pipelineResent;
  const aloneReadyAt = [...(await alone.ready).values()].map((t) => (t - ssaStarted) / 1000).sort((a, b) => a - b);

  // 3. A classic controller-runtime operator (bench/classic/) on the same burst, in a namespace of
  // its own, with the product's Triggers and sources removed first so that only it acts on, or
  // watches, what is created.
  for (const fn of PRODUCT_FUNCTIONS.filter((f) => f !== "dead-letter")) {
    await persist(`deleting Trigger poolrelay-${fn}`, () =>
      admin.request("DELETE", `/apis/eventing.knative.dev/v1/namespaces/${PRODUCT_NAMESPACE}/triggers/poolrelay-${fn}`),
    );
  }
  for (const [plural, name] of [
    ["apiserversources", "poolrelay-watch"],
    ["pingsources", "poolrelay-resync"],
  ]) {
    await persist(`deleting ${plural}/${name}`, () =>
      admin.request("DELETE", `/apis/sources.knative.dev/v1/namespaces/${PRODUCT_NAMESPACE}/${plural}/${name}`),
    );
  }
  await persist("deleting the event source's Deployment", () =>
    admin.request("DELETE", `/apis/apps/v1/namespaces/${PRODUCT_NAMESPACE}/deployments/poolrelay-source`),
  );
  for (let i = 2 * NODES + 1; i <= 3 * NODES; i++)
    await admin.apply(fakeNode(`kwok-node-${i}`, true), MANAGER, { force: true });
  const cns = "classic";
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: cns } }, MANAGER);
  const classic = startClassic(classicBinary, cp.kubeconfig, cns);
  await sleep(3000); // its informers' start (one watch a kind, the initial list streamed through it)
  const classicMachineBefore = processCpu();
  const classicStarted = performance.now();
  await all("DynamoPoolRelays (classic)", names, (name) => admin.apply(dpr(cns, name), MANAGER));
  await all("DGDs (classic)", names, (name) => admin.apply(dgd(cns, name), MANAGER));
  const classicListed = await allReady(cns, classicStarted);
  const classicMachine = cpuByName(classicMachineBefore, processCpu());
  const classicReport = await classic.stop();
  const classicReadyAt = transitions(classicListed, "Ready");

  const per = (fn: string) => invocations.filter((i) => i.function === fn);
  const sum = (xs: readonly { reads: number; writes: number }[], f: "reads" | "writes") =>
    xs.reduce((n, i) => n + i[f], 0);
  console.log(
    `\n${PAIRS.toLocaleString("en")} DGD/DynamoPoolRelay pairs at once (profile node, ${AT_ONCE} requests at once)\n`,
  );
  console.log("| | |\n|---|---|");
  const at = (xs: number[], q: number) =>
    xs.length ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!.toFixed(0) : "-";
  console.log(`| the pairs created (DynamoPoolRelays, then DGDs) | ${createdS.toFixed(1)} s |`);
  console.log(
    `| writes the API server left unanswered (no answer in 10 s, or the stream ended), sent again: the pairs' creates / the children alone | ${pipelineResent} / ${ssaResent} |`,
  );
  console.log(
    `| Services published, from the first create (API server times) | ${publishedAt.length} of ${PAIRS}; median ${at(publishedAt, 0.5)} s, last ${at(publishedAt, 1)} s |`,
  );
  console.log(
    `| DynamoPoolRelays Ready (Relay pods Ready), from the first create | ${readyAt.length} of ${PAIRS}; median ${at(readyAt, 0.5)} s, last ${at(readyAt, 1)} s |`,
  );
  console.log(
    `| not Ready when the wait ended (all Ready, or ${waitMs / 1000} s) | ${notReady.length ? notReady.join(", ") : "none"} |`,
  );
  console.log(
    `| the last event entered the Broker, from the first create | ${idleAfterS.toFixed(0)} s (${tappedEvents.toLocaleString("en")} events tapped) |`,
  );
  console.log(
    `| changes lost on the way to the Broker (an independent watch against the tap: the last change the source is to send of ${changes.last.size.toLocaleString("en")} objects; ${changes.unsent.count.toLocaleString("en")} changes it leaves out by design) | ${lost.length}${
      lost.length
        ? `: ${lost
            .slice(0, 10)
            .map((l) => `${l.kind} ${l.key}@${l.resourceVersion} (${l.change})`)
            .join(", ")}${lost.length > 10 ? ", …" : ""}`
        : ""
    } |`,
  );
  console.log(
    `| CPU time of every pod on the real node (functions, sources, Knative, Traefik, CoreDNS), to the last Ready | ${pipelineCpuS.toFixed(0)} s |`,
  );
  console.log(
    `| the API server alone: server-side apply of the same ${children.length.toLocaleString("en")} children | ${ssaS.toFixed(1)} s |`,
  );
  if (publishedAt.length === PAIRS)
    console.log(
      `| ratio: server-side apply alone / the pipeline to every Service published | ${(ssaS / publishedAt.at(-1)!).toFixed(2)} |`,
    );
  console.log(
    `| the same children alone, Ready as the product's status would call it (a replica available, a ready endpoint), from the first apply | ${aloneReadyAt.length} of ${PAIRS}; median ${at(aloneReadyAt, 0.5)} s, last ${at(aloneReadyAt, 1)} s |`,
  );
  if (readyAt.length === PAIRS && aloneReadyAt.length === PAIRS)
    console.log(
      `| ratio: the children alone to Ready / the pipeline to every DynamoPoolRelay Ready | ${(aloneReadyAt.at(-1)! / readyAt.at(-1)!).toFixed(2)} |`,
    );
  const requests = sum(invocations, "reads") + sum(invocations, "writes");
  console.log(
    `| the classic controller-runtime operator (bench/classic/, 4 workers, cached reads): DynamoPoolRelays Ready, from the first create | ${classicReadyAt.length} of ${PAIRS}; median ${at(classicReadyAt, 0.5)} s, last ${at(classicReadyAt, 1)} s |`,
  );
  if (readyAt.length === PAIRS && classicReadyAt.length === PAIRS)
    console.log(
      `| ratio: the classic operator to Ready / the pipeline to Ready | ${(classicReadyAt.at(-1)! / readyAt.at(-1)!).toFixed(2)} |`,
    );
  console.log(
    `| API requests a pair: the pipeline's functions / the classic operator (watches and discovery included) | ${(requests / PAIRS).toFixed(1)} / ${(classicReport.requests / PAIRS).toFixed(1)} |`,
  );
  console.log(
    `| CPU time to the last Ready: every pod on the real node in the pipeline's part / the classic operator's process | ${pipelineCpuS.toFixed(0)} s / ${classicReport.cpuSeconds.toFixed(0)} s |`,
  );
  if (readyAt.length === PAIRS)
    console.log(
      `| API requests a second: the pipeline's functions, to the last Ready / the server-side apply alone | ${(requests / readyAt.at(-1)!).toFixed(0)} / ${(children.length / ssaS).toFixed(0)} |`,
    );
  console.log(
    "\n| function | invocations | per pair | API reads | API writes | requests per pair |\n|---|---|---|---|---|---|",
  );
  for (const fn of PRODUCT_FUNCTIONS) {
    const xs = per(fn);
    console.log(
      `| ${fn} | ${xs.length} | ${(xs.length / PAIRS).toFixed(1)} | ${sum(xs, "reads")} | ${sum(xs, "writes")} | ${((sum(xs, "reads") + sum(xs, "writes")) / PAIRS).toFixed(1)} |`,
    );
  }
  console.log(
    `| all | ${invocations.length} | ${(invocations.length / PAIRS).toFixed(1)} | ${sum(invocations, "reads")} | ${sum(invocations, "writes")} | ${((sum(invocations, "reads") + sum(invocations, "writes")) / PAIRS).toFixed(1)} |`,
  );
  // Why apply ran: each reconcile request's cause, and what the run decided.
  const causes = new Map<string, number>();
  for (const i of per("apply")) {
    const label = `${i.key?.cause ?? "?"} → ${i.decision ?? `status ${i.status}`}`;
    causes.set(label, (causes.get(label) ?? 0) + 1);
  }
  console.log("\n| apply: request cause → decision | runs | per pair |\n|---|---|---|");
  for (const [label, n] of [...causes].sort((a, b) => b[1] - a[1]))
    console.log(`| ${label} | ${n} | ${(n / PAIRS).toFixed(2)} |`);
  // What status's runs read: by decision and by how much of the world they read (all, or only the shown children).
  const statusRuns = new Map<string, { runs: number; reads: number; writes: number }>();
  for (const i of per("status")) {
    const reads = (i as Invocation & { childReads?: string }).childReads;
    const label = `${i.decision ?? `status ${i.status}`}${reads ? ` (${reads})` : ""}`;
    const row = statusRuns.get(label) ?? { runs: 0, reads: 0, writes: 0 };
    statusRuns.set(label, { runs: row.runs + 1, reads: row.reads + i.reads, writes: row.writes + i.writes });
  }
  console.log(
    "\n| status: decision (children read) | runs | reads | writes | requests per pair |\n|---|---|---|---|---|",
  );
  for (const [label, r] of [...statusRuns].sort((a, b) => b[1].reads + b[1].writes - a[1].reads - a[1].writes)) {
    console.log(`| ${label} | ${r.runs} | ${r.reads} | ${r.writes} | ${((r.reads + r.writes) / PAIRS).toFixed(2)} |`);
  }
  // Two rules whose saving only a count shows: invocations answered by a run of the same key
  // another shared (shared/coalesce.ts), and status runs that found children off the decision but
  // asked no reconcile, since the off children had not changed (apply was still creating them).
  const shared = (fn: string) => per(fn).filter((i) => i.coalesced === true).length;
  const offDecision = per("status").filter((i) => i.reflects === false);
  console.log(
    `\ninvocations answered by a shared run: apply ${shared("apply")}, status ${shared("status")}; ` +
      `status runs off the decision: ${offDecision.length}, of them asking a reconcile (Drift): ${offDecision.filter((i) => i.reply?.type === EventType.Reconcile).length}`,
  );
  // Each pod's container under its Service's memory limit, sampled over both parts of the run (bench/function-memory.ts).
  console.log(
    "\n| function | memory limit | pods | peak memory of a pod (cgroup, page cache included) | restarts |\n|---|---|---|---|---|",
  );
  for (const f of await memory.stop()) {
    const limit = serviceMemoryLimit(f.name.replace(/^poolrelay-/, "")).text;
    console.log(
      `| ${f.name} | ${limit} | ${f.pods} | ${f.peakMiB === undefined ? "not measured" : `${f.peakMiB.toFixed(0)} MiB`} | ${f.restarts}${f.reason ? ` (${f.reason})` : ""} |`,
    );
  }
  // The whole machine, by process, from the first create to the last Ready of each part: the
  // processes of the cluster itself and of the bench run in both, the functions and Knative's in the first.
  const seconds = (part: [string, number][], name: string) => part.find(([n]) => n === name)?.[1] ?? 0;
  const top = [...new Set([...pipelineMachine, ...classicMachine].sort((a, b) => b[1] - a[1]).map(([n]) => n))].slice(
    0,
    25,
  );
  const total = (part: [string, number][]) => part.reduce((n, [, s]) => n + s, 0);
  console.log(
    `\n| CPU seconds on the machine, to the last Ready (2 cores: ${readyAt.length === PAIRS ? `${(2 * readyAt.at(-1)!).toFixed(0)}` : "-"} / ${classicReadyAt.length === PAIRS ? `${(2 * classicReadyAt.at(-1)!).toFixed(0)}` : "-"} available) | the pipeline | the classic operator |\n|---|---|---|`,
  );
  for (const name of top)
    console.log(
      `| ${name} | ${seconds(pipelineMachine, name).toFixed(1)} | ${seconds(classicMachine, name).toFixed(1)} |`,
    );
  console.log(`| all | ${total(pipelineMachine).toFixed(0)} | ${total(classicMachine).toFixed(0)} |`);
  const ticks = per("eligibility").filter((i) => i.decision === "Resync");
  console.log(`\nresync ticks during the run: ${ticks.length}`);
  if (notReady.length) process.exitCode = 1;
} finally {
  await cp.stop();
}
