/**
 * What a function is: a handler from one validated CloudEvent and a context to a result. The
 * handler throws BadEvent for input that can never succeed; anything else it throws is retried.
 */
import type { DynamoPoolRelay, DynamoPoolRelayStatus } from "../../shared/api/dynamo-pool-relay.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import type { Classified } from "../../shared/classify.ts";
import { Coalescer } from "../../shared/coalesce.ts";
import type { Config } from "../../shared/config.ts";
import { keyString, type DprKey } from "../../shared/events.ts";
import { readyTransition, renderEvent, type KubeEvent } from "../../shared/k8s-events.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { childName } from "../../shared/names.ts";
import type { ObservedEndpointSlice } from "../../shared/status.ts";

export interface Context {
  kube: KubeClient;
  config: Config;
  /** RFC 3339, second precision: condition times and event times. */
  now(): string;
  /** Sends an event to the configured sink (the Broker), failing unless it is accepted. */
  emit(event: CloudEvent): Promise<void>;
  /** Resolves after `ms` milliseconds (a batch period); tests give their own. */
  sleep(ms: number): Promise<void>;
}

export interface Result {
  /** A short word for the log: what the handler decided. */
  decision: string;
  reply?: CloudEvent;
  fields?: Record<string, unknown>;
}

export type Handler = (event: CloudEvent, ctx: Context) => Promise<Result>;

/** Input that no retry can fix: answered 4xx so the broker does not redeliver it. */
export class BadEvent extends Error {
  readonly status: 400 | 422;
  constructor(status: 400 | 422, message: string) {
    super(message);
    this.name = "BadEvent";
    this.status = status;
  }
}

export interface Coalescing<K extends DprKey, I> {
  (key: K, input: I, run: (merged: I) => Promise<Result>, batch?: () => Promise<void>): Promise<Result>;
  /** Settles when the runs for the key in flight or queued now have ended (Coalescer.settled). */
  settled(key: K): Promise<void>;
}

/**
 * Concurrent invocations about one DynamoPoolRelay in this process share runs (shared/coalesce.ts).
 * Each brings its input; a run answers the inputs of every invocation it answers, merged with
 * `merge` as they arrive, and taken when it starts. One answered by another's run returns its
 * decision without its reply: that run's invocation sends it, once. It logs its own key (a
 * reconcile request's cause with it), not the run's.
 */
export function coalescing<K extends DprKey, I>(merge: (earlier: I | undefined, later: I) => I): Coalescing<K, I> {
  const runs = new Coalescer<Result>();
  const pending = new Map<string, I>();
  const settled = (key: K) => runs.settled(keyString(key));
  return Object.assign(
    async (key: K, input: I, run: (merged: I) => Promise<Result>, batch?: () => Promise<void>) => {
      const slot = keyString(key);
      pending.set(slot, merge(pending.get(slot), input));
      const start = () => {
        // Set above by every invocation this run answers, each before it joined the run.
        const merged = pending.get(slot)!;
        pending.delete(slot);
        return run(merged);
      };
      const { value, ran } = await runs.run(slot, start, batch);
      return ran ? value : { decision: value.decision, fields: { ...value.fields, key, coalesced: true } };
    },
    { settled },
  );
}

/** The EndpointSlices behind a DynamoPoolRelay's Service: what status counts as ready listeners. */
export function relayEndpointSlices(kube: KubeClient, key: DprKey): Promise<ObservedEndpointSlice[]> {
  return kube.list<ObservedEndpointSlice>(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    key.namespace,
    `kubernetes.io/service-name=${childName(key.name)}`,
  );
}

export function mustClassify<T>(classified: Classified<T>): T {
  if (!classified.ok) throw new BadEvent(classified.status, classified.error);
  return classified.value;
}

/** What became of a Kubernetes Event, for the invocation's log line (`kubeEvents`). */
export interface EventOutcome {
  reason: string;
  name: string;
  /** `exists`: another invocation (a redelivery, a concurrent duplicate, an earlier reconcile of the generation) reported it. */
  outcome: "created" | "exists" | "failed";
  error?: string;
}

/**
 * Writes a Kubernetes Event, best effort: a failure comes back for the log and is never thrown,
 * so it neither fails the reconcile nor makes the Broker redeliver (and so retry) for it; the
 * client's own bounds (throttling waited out at most three times, the invocation's deadline) end
 * it. `lookFirst` is for outcomes every reconcile of the generation repeats (a rejected spec, a
 * foreign child: each resync decides them again): a read finds the Event written before, so a
 * repeat costs no write.
 */
export async function recordEvent(kube: KubeClient, event: KubeEvent, lookFirst = false): Promise<EventOutcome> {
  const about = { reason: event.reason, name: event.metadata.name };
  try {
    if (
      lookFirst &&
      (await kube.get({
        apiVersion: "v1",
        kind: "Event",
        namespace: event.metadata.namespace,
        name: event.metadata.name,
      }))
    ) {
      return { ...about, outcome: "exists" };
    }
    await kube.create(event);
    return { ...about, outcome: "created" };
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) return { ...about, outcome: "exists" };
    return { ...about, outcome: "failed", error: err instanceof Error ? err.message : String(err) };
  }
}

/** The log field for the Events an invocation wrote, present only when it tried to write one. */
export function eventFields(outcomes: readonly EventOutcome[]): { kubeEvents?: readonly EventOutcome[] } {
  return outcomes.length > 0 ? { kubeEvents: outcomes } : {};
}

/** A status write: the DynamoPoolRelay's resourceVersion that holds it, and the Events it reported. */
export interface StatusWrite {
  resourceVersion: string | undefined;
  events: EventOutcome[];
}

/**
 * Writes a computed status over the very DynamoPoolRelay version it was computed from, so a
 * concurrent write makes it fail (409), then reports Ready turning True or False as a Kubernetes
 * Event: of concurrent writers, only the one whose write won reports it.
 */
export async function writeStatus(
  ctx: Context,
  dpr: DynamoPoolRelay,
  status: DynamoPoolRelayStatus,
  reporter: string,
): Promise<StatusWrite> {
  const written = await ctx.kube.replaceStatus<DynamoPoolRelay>({ ...dpr, status });
  const transition = readyTransition(dpr.status, status, dpr.metadata.resourceVersion);
  const events = transition ? [await recordEvent(ctx.kube, renderEvent(dpr, transition, reporter, ctx.now()))] : [];
  return { resourceVersion: written.metadata?.resourceVersion, events };
}
