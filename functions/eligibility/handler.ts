/**
 * eligibility: turns DynamoGraphDeployment and DynamoPoolRelay changes and resync ticks into
 * reconcile requests. A DGD event is answered with one request for the same-named
 * DynamoPoolRelay, if there is one; a DynamoPoolRelay event with one if its generation is not yet
 * observed (its own status writes change nothing to reconcile). A resync tick lists
 * DynamoPoolRelays and emits a request for each that has an unobserved generation or whose
 * periodic slot has come.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { classifyForEligibility } from "../../shared/classify.ts";
import { API_VERSION, KIND } from "../../shared/names.ts";
import { EventType, productEvent, type DprKey } from "../../shared/events.ts";
import { resyncReason, tickOf, unobserved, type ResyncCandidate } from "../../shared/resync.ts";
import { mustClassify, type Context, type Handler, type Result } from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/eligibility";

async function onChange(event: CloudEvent, changed: "dgd" | "dpr", key: DprKey, ctx: Context): Promise<Result> {
  // 2. Read: is there a DynamoPoolRelay for this key? (The payload only named the key.)
  const dpr = await ctx.kube.get<ResyncCandidate>({ apiVersion: API_VERSION, kind: KIND, ...key });
  if (!dpr || dpr.metadata.deletionTimestamp) return { decision: "NoDynamoPoolRelay", fields: { key } };
  if (changed === "dpr" && !unobserved(dpr)) return { decision: "Observed", fields: { key } };
  // 3. Reply: a reconcile request.
  const cause = changed === "dgd" ? "DGDChanged" : "DPRChanged";
  const reply = productEvent(EventType.Reconcile, { ...key, cause }, { source: SOURCE, cause: event.id, time: ctx.now() });
  return { decision: "Reconcile", reply, fields: { key } };
}

async function onResync(event: CloudEvent, ctx: Context): Promise<Result> {
  // 2. Read every DynamoPoolRelay once.
  const all = await ctx.kube.list<ResyncCandidate>(API_VERSION, KIND, undefined);
  // 3. Decide which need a reconcile on this tick.
  const tick = tickOf(event.time ?? ctx.now(), ctx.config.resyncPeriodSeconds);
  const due = all.flatMap((dpr) => {
    const reason = resyncReason(dpr, tick, ctx.config.resyncSlots);
    return reason ? [{ dpr, reason }] : [];
  });
  // 4. Emit one request each: a reply can carry only one event.
  const time = ctx.now();
  for (const { dpr } of due) {
    const key = { namespace: dpr.metadata.namespace ?? "", name: dpr.metadata.name };
    await ctx.emit(productEvent(EventType.Reconcile, { ...key, cause: "Resync" }, { source: SOURCE, cause: event.id, time }));
  }
  const unobserved = due.filter((d) => d.reason === "Unobserved").length;
  return { decision: "Resync", fields: { listed: all.length, emitted: due.length, unobserved, tick } };
}

export const eligibility: Handler = async (event, ctx) => {
  // 1. Parse: a DGD or DynamoPoolRelay event, or a resync tick.
  const input = mustClassify(classifyForEligibility(event));
  if (input.kind === "resync") return onResync(event, ctx);
  if (input.kind === "unpairable") return { decision: "NoDynamoPoolRelay", fields: { key: { namespace: input.namespace, name: input.name }, why: "unpairable name" } };
  return onChange(event, input.kind, input.key, ctx);
};
