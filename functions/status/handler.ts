/**
 * status: recomputes one DynamoPoolRelay's status from the observed world whenever the apply
 * function reports or one of its children changes, and writes it only when it differs, with
 * optimistic concurrency. When a changed child is off the decision, it asks for a reconcile. A
 * write that turns Ready True or False is reported as a Kubernetes Event. A child event carrying a
 * version the last run here already read, or an older one, costs nothing (shared/seen-versions.ts);
 * one equal to what it read at another version costs one read, of the DynamoPoolRelay, when no
 * one wrote the status since, and a run otherwise (after any run here in flight for the key, whose
 * reads it is then judged against). Nothing either: one that shows apply's own write, which
 * apply's report brings a run for (shared/last-write.ts), that report when apply wrote the status
 * itself, and an EndpointSlice added with no ready endpoint (shared/classify.ts, addsNoEndpoint).
 * A change of only what status shows, under a status that vouches for the rest, reads only that
 * and the DynamoPoolRelay, not the DGD (shared/status-plan.ts, shownOnly), and the Service only
 * for its own change (readsService), unless the children are off the decision that status
 * records; a change of the Deployment alone that its event shows changes nothing there reads only
 * the DynamoPoolRelay (deploymentShown).
 */
import type { DynamoPoolRelay } from "../../shared/api/dynamo-pool-relay.ts";
import type { LiveObject } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { classifyForStatus, mergeStatusInputs, type StatusInput } from "../../shared/classify.ts";
import { decide } from "../../shared/decide.ts";
import { EventType, keyString, productEvent, type DprKey } from "../../shared/events.ts";
import { Reporter } from "../../shared/k8s-events.ts";
import { isConflict } from "../../shared/kube/errors.ts";
import { API_VERSION, KIND, childName } from "../../shared/names.ts";
import { SeenVersions, childVersions } from "../../shared/seen-versions.ts";
import { deploymentShown, planStatus, readsService, shownOnly, type StatusPlanInput } from "../../shared/status-plan.ts";
import type { ObjectRef } from "../../shared/kube/client.ts";
import type { ObservedDeployment } from "../../shared/status.ts";
import { coalescing, eventFields, mustClassify, relayEndpointSlices, writeStatus, type Context, type Handler, type Result } from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/status";
/** Concurrent events for one key race on the status write; the loser re-reads and recomputes at once. */
const CONFLICT_ATTEMPTS = 3;
/** DynamoPoolRelays whose last run's child versions are kept: the scale this product is measured at. */
const SEEN_CAPACITY = 10_000;

const seen = new SeenVersions(SEEN_CAPACITY);

const dprRef = (key: DprKey): ObjectRef => ({ apiVersion: API_VERSION, kind: KIND, namespace: key.namespace, name: key.name });

async function reconcileStatus(event: CloudEvent, ctx: Context, input: StatusInput, trustRecord = true): Promise<Result> {
  const { key } = input;
  const ref = (apiVersion: string, kind: string, name = childName(key.name)) => ({ apiVersion, kind, namespace: key.namespace, name });

  // 2. Read the DynamoPoolRelay, then its DGD and the children status is made of: after the
  // DynamoPoolRelay, so that a status written meanwhile from newer children fails this run's write.
  const dpr = await ctx.kube.get<DynamoPoolRelay>(dprRef(key));
  if (!dpr || dpr.metadata.deletionTimestamp) {
    seen.forget(keyString(key));
    return { decision: "Gone", fields: { key } };
  }
  // A change of only what status shows, under a status that vouches for the rest: neither the DGD
  // nor the other children (shared/status-plan.ts, shownOnly).
  const recorded = trustRecord ? shownOnly(dpr, ctx.config.defaults, input) : undefined;
  // The Deployment's change alone (an input carries one only when all its events are the
  // Deployment's), shown already as its event carries it (shared/status-plan.ts, deploymentShown):
  // nothing to read, nothing to write.
  if (recorded && input.deployment && deploymentShown(dpr, recorded, input.deployment)) {
    return { decision: "Unchanged", fields: { key, childReads: "none" } };
  }
  // Under a recorded decision, the Service only for its own change (shared/status-plan.ts, readsService).
  const readService = !recorded || readsService(dpr.status, input.changed);
  const [dgd, deployment, service, endpointSlices, others] = await Promise.all([
    recorded ? undefined : ctx.kube.get(ref(ctx.config.dgdApiVersion, "DynamoGraphDeployment", key.name)),
    ctx.kube.get<LiveObject & ObservedDeployment>(ref("apps/v1", "Deployment")),
    readService ? ctx.kube.get<LiveObject>(ref("v1", "Service")) : undefined,
    relayEndpointSlices(ctx.kube, key),
    recorded ? {} : readUnshown(ctx, ref),
  ]);

  // 3. Decide.
  const decision = recorded ?? decide(dpr, dgd, ctx.config.defaults);
  const observed = { ...others, deployment, ...(readService ? { service } : {}), endpointSlices };
  const plan = planStatus({ dpr, decision, observed, changed: input.changed, ...(input.failure ? { failure: input.failure } : {}), now: ctx.now() });
  // Children off the recorded decision may carry a newer one (a withdrawal that deleted the Service
  // before its status was written, seen on the Service's event): only the DGD can tell, so read everything.
  if (recorded && !plan.reflects) return reconcileStatus(event, ctx, input, false);
  const ready = plan.status.conditions?.find((c) => c.type === "Ready");
  const fields = { key, childReads: recorded ? "shown" : "all", reflects: plan.reflects, ready: ready?.status, reason: ready?.reason, observedGeneration: plan.status.observedGeneration };
  const reply = plan.drift ? { reply: productEvent(EventType.Reconcile, { ...key, cause: "Drift" }, { source: SOURCE, cause: event.id, time: ctx.now() }) } : {};

  const read = [
    ...("configMap" in others ? [{ kind: "ConfigMap", objects: [others.configMap] }] : []),
    { kind: "Deployment", objects: [deployment] },
    ...(readService ? [{ kind: "Service", objects: [service] }] : []),
    { kind: "EndpointSlice", objects: endpointSlices },
  ];

  // 4. Write only a change.
  const written = plan.write ? await writeStatus(ctx, dpr, plan.status, Reporter.Status) : undefined;
  const statusAt = written ? written.resourceVersion : dpr.metadata.resourceVersion;
  seen.record(keyString(key), childVersions(read), read.map((r) => r.kind), statusAt);
  if (!written) return { decision: "Unchanged", fields, ...reply };
  return { decision: "StatusWritten", fields: { ...fields, ...eventFields(written.events) }, ...reply };
}

/** The children status shows nothing of but whether they carry the decision (shared/status-plan.ts, shownOnly). */
async function readUnshown(ctx: Context, ref: (apiVersion: string, kind: string) => ObjectRef): Promise<Partial<StatusPlanInput["observed"]>> {
  const [serviceAccount, role, roleBinding, configMap] = await Promise.all([
    ctx.kube.get<LiveObject>(ref("v1", "ServiceAccount")),
    ctx.kube.get<LiveObject>(ref("rbac.authorization.k8s.io/v1", "Role")),
    ctx.kube.get<LiveObject>(ref("rbac.authorization.k8s.io/v1", "RoleBinding")),
    ctx.kube.get<LiveObject>(ref("v1", "ConfigMap")),
  ]);
  return { serviceAccount, role, roleBinding, configMap };
}

async function withRetries(event: CloudEvent, ctx: Context, input: StatusInput): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await reconcileStatus(event, ctx, input);
    } catch (err) {
      if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
    }
  }
}

/**
 * Events for one key at once (a Deployment's status as its pods start, the EndpointSlice behind it,
 * apply's report of the writes that caused them) share runs, each run answering the merged input
 * of the events that wait for it: a report's failure is shown, every changed kind is judged for
 * drift. Shared runs also keep concurrent writes of one status from conflicting here.
 */
const runs = coalescing<DprKey, StatusInput>(mergeStatusInputs);

export const status: Handler = async (event, ctx) => {
  // 1. Parse: an apply report or a child change, and the DynamoPoolRelay it is about.
  const input = mustClassify(classifyForStatus(event));
  const key = keyString(input.key);
  if (input.shownByApply) return { decision: "ShownByApply", fields: { key: input.key } };
  if (input.addsNoEndpoint) return { decision: "NoEndpointAdded", fields: { key: input.key, version: input.version } };
  if (input.awaitsReport) return { decision: "AwaitsReport", fields: { key: input.key, version: input.version } };
  const judge = () => input.version && seen.seen(key, input.version);
  let read = judge();
  // Equal to what the last run here read, at another version: the same while the status is still
  // the one that run left, which one read of the DynamoPoolRelay tells. A run here in flight may
  // have read the child before this version: judged against what it leaves (its record, or, if it
  // recorded nothing, the record before it, whose status version its write would have moved).
  if (read === "equal") {
    await runs.settled(input.key);
    read = judge();
  }
  if (read === "same" || read === "older") return { decision: read === "same" ? "Seen" : "Stale", fields: { key: input.key, version: input.version } };
  if (read === "equal" && seen.unwritten(key, (await ctx.kube.get<DynamoPoolRelay>(dprRef(input.key)))?.metadata.resourceVersion)) {
    return { decision: "Seen", fields: { key: input.key, version: input.version, statusUnchanged: true } };
  }
  // With a batch period set (STATUS_BATCH_MS), a child change lets the rest of its burst gather;
  // a report from apply (which comes after the writes whose events it would wait for) starts the
  // run at once.
  const batch = input.changed.length > 0 && ctx.config.statusBatchMs > 0 ? () => ctx.sleep(ctx.config.statusBatchMs) : undefined;
  return runs(input.key, input, (merged) => withRetries(event, ctx, merged), batch);
};
