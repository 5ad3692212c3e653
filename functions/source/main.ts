/**
 * The product's event source: a long-lived process that watches and asks, and never writes
 * anything but its Lease. It keeps what the decisions read of every DynamoPoolRelay, of the DGD of
 * each and of every labelled child (shared/source-store.ts), and
 *   - sends the change events of the DynamoPoolRelays and of the children status takes to K_SINK
 *     (the Broker), as the ApiServerSource sends them, in two lanes (the pairs' own, the
 *     children's); a relist passes on every difference from what it knew;
 *   - asks for a reconcile of each pair its judgment finds not converged, off its DGD, or whose
 *     children do not carry its status's decision (shared/requeue.ts), once the pair is quiet: so
 *     whatever changed while no replica watched (down, restarting, rolling) is looked at after its
 *     first list, and whatever a lost event left undone after a quiet period;
 *   - runs as several replicas: every one watches and judges, only the holder of the Lease sends
 *     (shared/lease.ts), so a standby takes over with its cache warm.
 * node dist/functions/source.mjs
 */
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig, parseSourceConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { connect, KubeClient, type KubeObject } from "../../shared/kube/client.ts";
import { KIND, LABEL_MANAGED_BY, PRODUCT } from "../../shared/names.ts";
import { requeueAction, requeueReason, requeueTickMs, type Reread } from "../../shared/requeue.ts";
import {
  awaitsFirstStatus,
  changeEvent,
  holdMs,
  laneOf,
  merged,
  queueKey,
  requeueKey,
  sent,
  type Change,
} from "../../shared/source-events.ts";
import { DGD_KIND, SourceStore, sentFactsOf, type Taken } from "../../shared/source-store.ts";
import { nameOf, type Seen } from "../../shared/source-views.ts";
import { sinkPost } from "../runtime/sink.ts";
import { Elector } from "./elector.ts";
import { inform, type Watch } from "./informer.ts";
import { SendQueue } from "./send-queue.ts";

const CHILDREN = `${LABEL_MANAGED_BY}=${PRODUCT}`;
const REQUEUE_SOURCE = "/dynamo-pool-relay/source";
const SEND_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** Pairs judged between two turns of the event loop: a restart over many pairs never holds it long. */
const JUDGE_SLICE = 200;
/** Objects read again at once, when the source cannot judge a pair from what it kept. */
const REREADS_AT_ONCE = 4;
const STATS_EVERY_MS = 60_000;
/** The Lease: lapsed 15 s after its last renewal (a standby takes over within that and one look), renewed every 5 s. */
const ELECTION = { leaseDurationMs: 15_000, renewEveryMs: 5_000, renewDeadlineMs: 10_000 };

const log = (fields: Record<string, unknown>) =>
  console.log(JSON.stringify({ source: "poolrelay-source", time: new Date().toISOString(), ...fields }));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const now = () => Date.now();

const [config, settings] = (() => {
  try {
    // The decision settings too, the same as the functions': the requeue judges each pair as they would.
    return [parseSourceConfig(process.env), parseConfig(process.env, "source")] as const;
  } catch (err) {
    console.error((err as Error).message);
    return process.exit(1);
  }
})();
const connection = await connect(undefined, process.env);
const kube = new KubeClient(connection);
const post = sinkPost(process.env);
const queue = new SendQueue(
  async (event) => {
    const { headers, body } = toBinary(event);
    return post(config.sink, headers, body, AbortSignal.timeout(SEND_TIMEOUT_MS));
  },
  config.concurrency,
  { refused: (i) => log({ msg: "refused", ...i }), retrying: (i) => log({ msg: "retrying", ...i }), settled },
  sleep,
  { merge: merged, laneOf },
);
const store = new SourceStore(settings.defaults);
// A process of its own: a container restarted in the same pod is a new candidate, which waits for
// the Lease its previous process held to lapse, as any other (controller-runtime names its the same way).
const identity = `${config.identity ?? hostname()}_${randomUUID().slice(0, 8)}`;
const elector = new Elector(
  kube,
  config.lease,
  { identity, ...ELECTION },
  { now, sleep },
  {
    changed: (leads) => log({ msg: leads ? "leading" : "standing by", identity }),
    log,
  },
);

/** What it watches: the pairs' own objects first (a child is judged against its pair's decisions), then each child kind, with its plural for the events' subject. */
const PAIRS: (Watch & { plural: string })[] = [
  { apiVersion: "nvidia.com/v1alpha1", kind: KIND, plural: "dynamopoolrelays" },
  { apiVersion: settings.dgdApiVersion, kind: DGD_KIND, plural: "dynamographdeployments" },
];
const CHILD_WATCHES: (Watch & { plural: string })[] = [
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", labelSelector: CHILDREN },
  { apiVersion: "v1", kind: "Service", plural: "services", labelSelector: CHILDREN },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", labelSelector: CHILDREN },
  { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", plural: "endpointslices", labelSelector: CHILDREN },
  { apiVersion: "v1", kind: "ServiceAccount", plural: "serviceaccounts", labelSelector: CHILDREN },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", plural: "roles", labelSelector: CHILDREN },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", plural: "rolebindings", labelSelector: CHILDREN },
];

/** Children's changes held back until their pair's first status is written (awaitsFirstStatus), one event a queue key, merged as the queue merges. */
const awaiting = new Map<string, Map<string, CloudEvent>>();
/** Each pair's events queued or being sent, and the pair of each queue key that holds one. */
const sending = new Map<string, number>();
const pairOfKey = new Map<string, string>();
/** What it asked of the API server (list pages, watches, rereads) and of the Broker (reconcile requests): for its stats line. */
const counts = { listPages: 0, watches: 0, rereads: 0, asked: 0 };

/** Queues a pair's event; the pair is not quiet until the queue has let go of it. */
function send(pair: string, queueKey: string, event: CloudEvent, hold = 0): void {
  if (!queue.holds(queueKey)) {
    pairOfKey.set(queueKey, pair);
    sending.set(pair, (sending.get(pair) ?? 0) + 1);
  }
  queue.push(queueKey, event, hold);
}

/** A queue key's last event has left: its pair has one fewer in the queue, and was active just now. */
function settled(queueKey: string): void {
  const pair = pairOfKey.get(queueKey);
  if (pair === undefined) return;
  pairOfKey.delete(queueKey);
  const left = (sending.get(pair) ?? 1) - 1;
  if (left > 0) sending.set(pair, left);
  else sending.delete(pair);
  store.active(pair, now());
}

/** A pair's first status is written, or the pair is gone: what its children's changes held back leaves now, or never. */
function firstStatus(pair: string): void {
  const held = awaiting.get(pair);
  const dpr = store.record(pair)?.dpr;
  if (!held || (dpr && awaitsFirstStatus(dpr))) return;
  awaiting.delete(pair);
  if (dpr && elector.leading) for (const [key, event] of held) send(pair, key, event);
}

/**
 * A DGD's change, for each DynamoPoolRelay whose selector matches the DGD before or after it: a
 * reconcile request, held as a child's update is, so that a burst of DGD changes asks once. (The
 * DynamoPoolRelay of the DGD's name hears of it from the ApiServerSource, through eligibility.)
 */
function askSelectors(obj: Seen, taken: Taken): void {
  if (!elector.leading) return;
  for (const pair of taken.selectedBy ?? []) {
    const [namespace, name] = [pair.slice(0, pair.indexOf("/")), pair.slice(pair.indexOf("/") + 1)];
    const cause = `dgd-${obj.metadata.uid ?? obj.metadata.name}-${obj.metadata.resourceVersion ?? ""}`;
    const event = productEvent(
      EventType.Reconcile,
      { namespace, name, cause: "DGDChanged" },
      { source: REQUEUE_SOURCE, cause, time: new Date().toISOString() },
    );
    send(pair, requeueKey(pair), event, config.batchMs);
  }
}

/** A change the store took: sent when this replica leads, and the kind's events are sent at all. */
function pass(watch: Watch & { plural: string }, obj: Seen, taken: Taken): void {
  const { pair, change } = taken;
  if (watch.kind === KIND) firstStatus(pair);
  if (taken.rereadDgds) void reread(pair, { dgd: false, namespaceDgds: true, children: [] });
  if (watch.kind === DGD_KIND) askSelectors(obj, taken);
  if (!elector.leading || !sent(change, obj, sentFactsOf(taken.previous))) return;
  const event = changeEvent(change, obj, {
    source: connection.server,
    plural: watch.plural,
    time: new Date().toISOString(),
  });
  const key = queueKey(watch.kind, obj, pair);
  if (watch.kind !== KIND && awaitsFirstStatus(store.record(pair)?.dpr)) {
    const held = awaiting.get(pair) ?? new Map<string, CloudEvent>();
    const before = held.get(key);
    awaiting.set(pair, held.set(key, before ? merged(before, event) : event));
  } else send(pair, key, event, holdMs(change, watch.kind, config.batchMs));
}

const stop = new AbortController();
const firstLists = new Map<string, () => void>();
const listed = (watches: readonly Watch[]) =>
  Promise.all(watches.map((w) => new Promise<void>((resolve) => firstLists.set(w.kind, resolve))));
let ready = false;

function watchKind(watch: Watch & { plural: string }): Promise<void> {
  let initial = true;
  /** What the list under way found changed since the last. */
  let changes = 0;
  async function* pages(...a: Parameters<KubeClient["listPages"]>) {
    for await (const page of kube.listPages<KubeObject>(...a)) {
      counts.listPages++;
      yield page;
    }
  }
  return inform(
    {
      listPages: pages as KubeClient["listPages"],
      listAndWatch: (...a) => (counts.watches++, kube.listAndWatch(...a)),
    },
    watch,
    {
      began(kind) {
        store.listBegan(kind);
        changes = 0;
      },
      listed(obj) {
        const taken = store.listed(obj, now());
        if (taken) changes++;
        // What a first list finds is what exists: nothing to pass on, only to judge.
        if (taken && !initial) pass(watch, obj, taken);
      },
      ended(info) {
        for (const { obj, taken } of store.listEnded(watch.kind, watch.apiVersion, now())) {
          changes++;
          if (!initial) pass(watch, obj, taken);
        }
        initial = false;
        firstLists.get(watch.kind)?.();
        log({ msg: "listed", ...info, changes });
      },
      change(change: Change, obj: KubeObject) {
        const taken = store.take(change, obj, now());
        if (taken) pass(watch, obj, taken);
      },
      failed(info) {
        log({ msg: "watch failed", ...info });
      },
    },
    stop.signal,
    { relistMs: config.relistSeconds * 1000, now, sleep },
  );
}

const requeueMs = config.requeueSeconds * 1000;
/** Pairs whose objects are being read again, so each is read once at a time. */
const rereading = new Set<string>();

/**
 * Reads again what the source could not judge a pair from: its DGD, the DGDs of its namespace (in
 * one LIST), or children seen before their intent was known.
 */
async function reread(pair: string, what: Reread): Promise<void> {
  if (rereading.has(pair) || rereading.size >= REREADS_AT_ONCE) return;
  rereading.add(pair);
  const [namespace, name] = [pair.slice(0, pair.indexOf("/")), pair.slice(pair.indexOf("/") + 1)];
  try {
    if (what.namespaceDgds) {
      counts.rereads++;
      const apiVersion = settings.dgdApiVersion;
      for (const dgd of await kube.list<KubeObject>(apiVersion, DGD_KIND, namespace))
        store.retake({ ...dgd, apiVersion, kind: DGD_KIND }, now());
    }
    const refs = [
      ...(what.dgd ? [{ apiVersion: settings.dgdApiVersion, kind: DGD_KIND, name }] : []),
      ...what.children.map((c) => ({
        apiVersion: CHILD_WATCHES.find((w) => w.kind === c.kind)!.apiVersion,
        kind: c.kind,
        name: nameOf(c, name),
      })),
    ];
    for (const ref of refs) {
      counts.rereads++;
      const obj = await kube.get<KubeObject>({ ...ref, namespace });
      if (obj) store.retake({ ...obj, apiVersion: ref.apiVersion, kind: ref.kind }, now());
      else store.gone(ref.kind, namespace, ref.name, now());
    }
  } catch (err) {
    log({ msg: "reread failed", pair, error: err instanceof Error ? err.message : String(err) });
  } finally {
    rereading.delete(pair);
  }
}

/**
 * The requeue: each pair quiet long enough is judged (once after each of its changes), and the
 * leader asks for each one found off, as its backoff allows. Checked every twelfth of the period.
 */
async function requeueTick(): Promise<void> {
  const at = now();
  let judged = 0;
  for (const [key, record] of store.pairs()) {
    const state = { sending: sending.get(key) ?? 0, now: at, requeueMs, leading: elector.leading };
    let action = requeueAction(record, state);
    if (action.do === "judge") {
      record.judged = requeueReason(store.view(key)!, settings.defaults) ?? null;
      if (++judged % JUDGE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      action = requeueAction(record, state);
    }
    if (action.do === "reread") void reread(key, action.what);
    if (action.do !== "ask") continue;
    store.asked(key, at);
    counts.asked++;
    const { namespace = "", name, uid = "", resourceVersion = "" } = record.dpr.metadata;
    const cause = `requeue-${uid}-${resourceVersion}-${record.asked}`;
    send(
      key,
      requeueKey(key),
      productEvent(
        EventType.Reconcile,
        { namespace, name, cause: "Requeue" },
        { source: REQUEUE_SOURCE, cause, time: new Date(at).toISOString() },
      ),
    );
    log({ msg: "requeued", key, reason: action.reason, asked: record.asked });
  }
}

let ticking = false;
const requeue = setInterval(() => {
  if (ticking || !ready) return;
  ticking = true;
  void requeueTick().finally(() => (ticking = false));
}, requeueTickMs(requeueMs));

function stats(): Record<string, unknown> {
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  const peak = process.resourceUsage().maxRSS * 1024;
  return {
    peak,
    pairs: [...store.pairs()].length,
    records: store.size,
    leading: elector.leading,
    ...queue.counts,
    queued: queue.size,
    rss,
    heapUsed,
    heapTotal,
    external,
    arrayBuffers,
    ...counts,
    reads: kube.stats.reads,
    writes: kube.stats.writes,
  };
}
const statsTimer = setInterval(() => log({ msg: "stats", ...stats() }), STATS_EVERY_MS);

const health = createServer((req, res) => {
  if (req.url?.startsWith("/statsz")) {
    // With --expose-gc (a bench), after a full collection: what is held, not what is yet to be collected.
    if (req.url === "/statsz?gc" && typeof globalThis.gc === "function") globalThis.gc();
    return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats()));
  }
  const ok = req.url === "/livez" || (req.url === "/readyz" && ready);
  res
    .writeHead(ok ? 200 : 503, { "content-type": "text/plain" })
    .end(ok ? "ok" : req.url === "/readyz" ? "listing" : "not found");
}).listen(config.port);

log({
  msg: "started",
  identity,
  sink: config.sink,
  concurrency: config.concurrency,
  requeueSeconds: config.requeueSeconds,
  batchMs: config.batchMs,
  relistSeconds: config.relistSeconds,
  kinds: [...PAIRS, ...CHILD_WATCHES].map((w) => w.kind),
});
const watching: Promise<void>[] = [];
let electing = Promise.resolve();

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    stop.abort();
    clearInterval(requeue);
    clearInterval(statsTimer);
    health.close();
    // The Lease given up first, so a standby sends from now; what is queued here is still sent,
    // within the grace period (a duplicate of what the new leader sends costs a run, a drop a change).
    void elector.release().then(() =>
      Promise.race([Promise.all([...watching, electing]).then(() => queue.idle()), sleep(STOP_GRACE_MS)]).then(() => {
        log({ msg: "stopped", ...stats(), unsent: queue.size });
        process.exit(0);
      }),
    );
  });
}

// The DynamoPoolRelays first, then their DGDs (kept with what they decide only once paired), then
// the children (each judged against its pair's decisions when it is listed).
for (const kinds of [PAIRS.slice(0, 1), PAIRS.slice(1), CHILD_WATCHES]) {
  if (stop.signal.aborted) break;
  const done = listed(kinds);
  watching.push(...kinds.map(watchKind));
  await done;
}
ready = true;
log({ msg: "ready", ...stats() });
// A replica campaigns once its cache is warm: it can judge every pair the moment it leads.
if (!stop.signal.aborted) electing = elector.run(stop.signal);
