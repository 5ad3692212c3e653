/**
 * The product's event source, run by the ContainerSource in knative/source.yaml: the change events
 * of the DynamoPoolRelays and of the product's labelled children, sent to K_SINK (the Broker) as
 * the ApiServerSource sends them, without what Knative's adapter loses (changes while a watch
 * expired; everything while one slow delivery holds a kind), in two lanes (the pairs' own events,
 * their children's), a pair's children's changes held back until its first status is written; and
 * a reconcile request for each pair that is not converged or whose status does not show its DGD,
 * once quiet for REQUEUE_SECONDS (a quarter of it when the functions have not acted on its
 * generation or its DGD's change; it watches the DGDs for that, and sends none of their events). What it
 * sends, holds and asks for is decided in shared/source-events.ts and shared/requeue.ts.
 * node dist/functions/source.mjs
 */
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig, parseSourceConfig } from "../../shared/config.ts";
import { EventType, childOwnerKey, keyString, productEvent } from "../../shared/events.ts";
import { connect, KubeClient, type KubeObject } from "../../shared/kube/client.ts";
import { LABEL_MANAGED_BY, PRODUCT } from "../../shared/names.ts";
import { PROMPT_SHARE, requeueAfterMs, requeueDue, requeueReason } from "../../shared/requeue.ts";
import type { ResyncCandidate } from "../../shared/resync.ts";
import type { ObservedDpr } from "../../shared/vouched-status.ts";
import { awaitsFirstStatus, changeEvent, holdMs, laneOf, merged, objectKey, queueKey, requeueKey, sent } from "../../shared/source-events.ts";
import { sinkPost } from "../runtime/sink.ts";
import { inform, type Watch } from "./informer.ts";
import { SendQueue } from "./send-queue.ts";

const CHILDREN = `${LABEL_MANAGED_BY}=${PRODUCT}`;
/** What it watches, with each kind's plural for the events' subject. */
const WATCHES: (Watch & { plural: string })[] = [
  { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", plural: "dynamopoolrelays" },
  { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", labelSelector: CHILDREN },
  { apiVersion: "v1", kind: "Service", plural: "services", labelSelector: CHILDREN },
  { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", labelSelector: CHILDREN },
  { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", plural: "endpointslices", labelSelector: CHILDREN },
];
const REQUEUE_SOURCE = "/dynamo-pool-relay/source";
const SEND_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;

const log = (fields: Record<string, unknown>) => console.log(JSON.stringify({ source: "poolrelay-source", time: new Date().toISOString(), ...fields }));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const [config, settings] = (() => {
  try {
    // The decision settings too, the same as the functions': the requeue asks whether a pair's status shows its DGD.
    return [parseSourceConfig(process.env), parseConfig(process.env)] as const;
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

type Pair = ResyncCandidate & ObservedDpr & KubeObject;
/**
 * Each DynamoPoolRelay as last seen; when it, its DGD or a child last changed, an event of it was
 * last delivered, or it was last asked for; and how often it was asked for since it last changed.
 */
const pairs = new Map<string, { dpr: Pair; since: number; asked: number; converged?: string }>();
/** Children's changes held back until their pair's first status is written (awaitsFirstStatus), one event a queue key, merged as the queue merges. */
const awaiting = new Map<string, Map<string, CloudEvent>>();
/** Each pair's events queued or being sent, and the pair of each queue key that holds one. */
const sending = new Map<string, number>();
const pairOfKey = new Map<string, string>();

/** Queues a pair's event; the pair is not quiet until the queue has let go of it. */
function send(pair: string, queueKey: string, event: CloudEvent, holdMs = 0): void {
  if (!queue.holds(queueKey)) {
    pairOfKey.set(queueKey, pair);
    sending.set(pair, (sending.get(pair) ?? 0) + 1);
  }
  queue.push(queueKey, event, holdMs);
}

/** A queue key's last event has left: its pair has one fewer in the queue, and was active just now. */
function settled(queueKey: string): void {
  const pair = pairOfKey.get(queueKey);
  if (pair === undefined) return;
  pairOfKey.delete(queueKey);
  const left = (sending.get(pair) ?? 1) - 1;
  if (left > 0) sending.set(pair, left);
  else sending.delete(pair);
  const p = pairs.get(pair);
  if (p) p.since = Date.now();
}

/** A pair's first status is written, or the pair is gone: what its children's changes held back leaves now, or never. */
function firstStatus(pair: string): void {
  const held = awaiting.get(pair);
  const p = pairs.get(pair);
  if (!held || (p && awaitsFirstStatus(p.dpr))) return;
  awaiting.delete(pair);
  if (p) for (const [key, event] of held) send(pair, key, event);
}

/** The pair or its DGD changed: quiet from now, and its requeue's backoff starts over. */
function changed(pair: string): void {
  const p = pairs.get(pair);
  if (p) Object.assign(p, { since: Date.now(), asked: 0 });
}
/** Each DGD as last seen (not sent: the ApiServerSource sends those), once they have been listed. */
const dgds = new Map<string, KubeObject>();
let dgdsListed = false;
const stop = new AbortController();

const dgdWatch = inform(kube, { apiVersion: settings.dgdApiVersion, kind: "DynamoGraphDeployment" }, {
  change(change, obj) {
    const key = objectKey(obj);
    if (change === "delete") dgds.delete(key);
    else dgds.set(key, obj);
    // A DGD's change goes its own way first (the ApiServerSource, eligibility): its pair is quiet from now.
    changed(key);
  },
  listed({ objects, ...info }) {
    dgds.clear();
    for (const o of objects) dgds.set(objectKey(o), o);
    dgdsListed = true;
    log({ msg: "listed", objects: objects.length, ...info });
  },
  failed(info) {
    log({ msg: "watch failed", ...info });
  },
}, stop.signal, sleep);

const watching = WATCHES.map((watch) =>
  inform(kube, watch, {
    change(change, obj, previous) {
      const child = watch.kind === "DynamoPoolRelay" ? undefined : childOwnerKey(obj as Parameters<typeof childOwnerKey>[0]);
      const pair = child ? keyString(child) : objectKey(obj);
      if (watch.kind === "DynamoPoolRelay") {
        if (change === "delete") pairs.delete(pair);
        else pairs.set(pair, { dpr: obj as Pair, since: Date.now(), asked: 0 });
        firstStatus(pair);
      } else changed(pair);
      if (sent(change, obj, previous)) {
        const event = changeEvent(change, obj, { source: connection.server, plural: watch.plural, time: new Date().toISOString() });
        const key = queueKey(watch.kind, obj, pair);
        if (watch.kind !== "DynamoPoolRelay" && awaitsFirstStatus(pairs.get(pair)?.dpr)) {
          const held = awaiting.get(pair) ?? new Map<string, CloudEvent>();
          const before = held.get(key);
          awaiting.set(pair, held.set(key, before ? merged(before, event) : event));
        } else send(pair, key, event, holdMs(change, watch.kind, config.batchMs));
      }
    },
    listed({ objects, ...info }) {
      // Every list (the first too) is what the requeue looks at; a pair keeps its quiet time unless it changed.
      if (watch.kind === "DynamoPoolRelay") {
        const before = new Map(pairs);
        pairs.clear();
        for (const obj of objects) {
          const was = before.get(objectKey(obj));
          const same = was?.dpr.metadata.resourceVersion === obj.metadata.resourceVersion;
          pairs.set(objectKey(obj), same && was ? was : { dpr: obj as Pair, since: Date.now(), asked: 0 });
        }
        for (const pair of [...awaiting.keys()]) firstStatus(pair);
      }
      log({ msg: "listed", objects: objects.length, ...info });
    },
    failed(info) {
      log({ msg: "watch failed", ...info });
    },
  }, stop.signal, sleep),
);

const requeueMs = config.requeueSeconds * 1000;
const requeue = setInterval(() => {
  const now = Date.now();
  for (const [key, p] of pairs) {
    const dgd = dgdsListed ? dgds.get(key) : "unknown";
    // A pair found converged stays so until it or its DGD changes: not decided again every tick (a
    // decision a pair, 10,000 pairs every 5 s, would be most of what the source does).
    const versions = `${p.dpr.metadata.resourceVersion}/${dgd === "unknown" ? "?" : (dgd?.metadata.resourceVersion ?? "-")}`;
    if (p.converged === versions) continue;
    const reason = requeueReason(p.dpr, dgd, settings.defaults);
    if (!reason) {
      p.converged = versions;
      continue;
    }
    if (!requeueDue(reason, { since: p.since, sending: sending.get(key) ?? 0 }, now, requeueAfterMs(requeueMs, p.asked))) continue;
    p.since = now;
    p.asked++;
    const { namespace = "", name } = p.dpr.metadata;
    const cause = `requeue-${p.dpr.metadata.uid ?? ""}-${p.dpr.metadata.resourceVersion ?? ""}-${p.asked}`;
    send(key, requeueKey(key), productEvent(EventType.Reconcile, { namespace, name, cause: "Requeue" }, { source: REQUEUE_SOURCE, cause, time: new Date(now).toISOString() }));
    log({ msg: "requeued", key, reason, asked: p.asked });
  }
}, requeueMs / PROMPT_SHARE / 3);

log({ msg: "started", sink: config.sink, concurrency: config.concurrency, requeueSeconds: config.requeueSeconds, batchMs: config.batchMs, kinds: WATCHES.map((w) => w.kind) });

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    stop.abort();
    clearInterval(requeue);
    // What is queued is sent, within the grace period: an event dropped here would be lost.
    void Promise.race([Promise.all([...watching, dgdWatch]).then(() => queue.idle()), sleep(STOP_GRACE_MS)]).then(() => {
      log({ msg: "stopped", ...queue.counts, unsent: queue.size });
      process.exit(0);
    });
  });
}
