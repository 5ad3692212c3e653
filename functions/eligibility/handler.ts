/**
 * eligibility: turns DynamoGraphDeployment changes and resync ticks into reconcile requests for
 * apply, leaving out those the stored status shows need none.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { classifyForEligibility, type EligibilityInput } from "../../shared/classify.ts";
import { changesNothing, type ObservedDpr } from "../../shared/vouched-status.ts";
import { API_VERSION, KIND } from "../../shared/names.ts";
import { selects } from "../../shared/source-views.ts";
import { EventType, productEvent, type DprKey } from "../../shared/events.ts";
import { settleBounded } from "../../shared/concurrency.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import {
  candidatesOf,
  dueOnTick,
  resyncCause,
  tickOf,
  type ResyncCandidate,
  type TablePage,
} from "../../shared/resync.ts";
import { mustClassify, type Context, type Handler, type Result } from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/eligibility";
/** DynamoPoolRelays per LIST page: no single response grows with the cluster. */
export const PAGE = 500;
/**
 * Reconcile requests in flight to the Broker at once. Serially, 10,000 requests outlast the
 * Service's 120 s timeout; 32 at once, at 10 ms a request at the ingress, take about 3 s (an
 * estimate, not a measurement).
 */
export const EMIT_CONCURRENCY = 32;

/**
 * A DGD event asks for the same-named DynamoPoolRelay's reconcile unless the DGD it carries decides
 * what the status says the children carry. (A DynamoPoolRelay's change goes to apply itself:
 * shared/classify.ts, classifyForApply.)
 */
async function onChange(
  event: CloudEvent,
  input: Extract<EligibilityInput, { kind: "dgd" }>,
  ctx: Context,
): Promise<Result> {
  const { key } = input;
  // 2. Read: is there a DynamoPoolRelay for this key?
  const dpr = await ctx.kube.get<ResyncCandidate & ObservedDpr & { spec?: unknown }>({
    apiVersion: API_VERSION,
    kind: KIND,
    ...key,
  });
  if (!dpr || dpr.metadata.deletionTimestamp) return { decision: "NoDynamoPoolRelay", fields: { key } };
  // One that picks its DGDs by label is not this DGD's by name: the source asks for it when a DGD
  // its selector matches changes (functions/source/main.ts, askSelectors).
  if (selects(dpr)) return { decision: "PicksByLabel", fields: { key } };
  // A DGD event whose DGD decides what the status says the children carry: nothing to do.
  if (changesNothing(dpr, input.observed, ctx.config.defaults)) return { decision: "Unchanged", fields: { key } };
  // 3. Reply: a reconcile request.
  const reply = productEvent(
    EventType.Reconcile,
    { ...key, cause: "DGDChanged" },
    { source: SOURCE, cause: event.id, time: ctx.now() },
  );
  return { decision: "Reconcile", reply, fields: { key } };
}

/**
 * A resync tick lists the DynamoPoolRelays in pages of the printer columns it decides from, and asks
 * for the reconcile of each one due (shared/resync.ts), with ids derived from the tick and the key.
 */
async function onResync(event: CloudEvent, ctx: Context): Promise<Result> {
  const tick = tickOf(event.time ?? ctx.now(), ctx.config.resyncPeriodSeconds);
  const counts = { listed: 0, pages: 0, due: 0, unobserved: 0, settling: 0 };
  // 2. Read page by page, 3. deciding each page as it comes: the next page is read only when
  // emits have worked off this one, so memory holds one page however many objects there are.
  async function* due(): AsyncGenerator<DprKey> {
    for await (const table of ctx.kube.listTablePages<TablePage>(API_VERSION, KIND, PAGE)) {
      const page = candidatesOf(table);
      counts.pages++;
      counts.listed += page.length;
      for (const { key, reason } of dueOnTick(page, tick, ctx.config.resyncSlots)) {
        counts.due++;
        if (reason === "Unobserved") counts.unobserved++;
        if (reason === "Settling") counts.settling++;
        yield key;
      }
    }
  }
  // 4. Emit one request each (a reply carries only one event), several at once.
  const emitContext = { source: SOURCE, cause: resyncCause(tick), time: ctx.now() };
  const { succeeded, failures } = await settleBounded(due(), EMIT_CONCURRENCY, (key) =>
    ctx.emit(productEvent(EventType.Reconcile, { ...key, cause: "Resync" }, emitContext)),
  );
  const fields = {
    listed: counts.listed,
    emitted: succeeded,
    failed: failures.length,
    unobserved: counts.unobserved,
    settling: counts.settling,
    tick,
    pages: counts.pages,
  };
  const first = failures[0];
  if (first) {
    // 503, so the Broker redelivers the tick and the re-run emits the same ids. The log of a
    // failed invocation carries only this message, hence every count in it.
    const why = first.error instanceof Error ? first.error.message : String(first.error);
    throw new ApiError(
      503,
      "ResyncIncomplete",
      `resync tick ${tick}: ${failures.length} of ${counts.due} reconcile requests failed, ${succeeded} sent ` +
        `(${counts.listed} listed in ${counts.pages} pages, ${counts.unobserved} unobserved); the first, for ${first.item.namespace}/${first.item.name}: ${why}`,
    );
  }
  return { decision: "Resync", fields };
}

export const eligibility: Handler = async (event, ctx) => {
  // 1. Parse: a DGD event, or a resync tick.
  const input = mustClassify(classifyForEligibility(event));
  if (input.kind === "resync") return onResync(event, ctx);
  if (input.kind === "unpairable")
    return {
      decision: "NoDynamoPoolRelay",
      fields: { key: { namespace: input.namespace, name: input.name }, why: "unpairable name" },
    };
  return onChange(event, input, ctx);
};
