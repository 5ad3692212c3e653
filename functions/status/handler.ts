/**
 * status: recomputes one DynamoPoolRelay's status when a child changes or apply reports, writes it
 * only when it differs (over the version read, so a concurrent write fails), and asks for a
 * reconcile when a changed child is off the decision. What it reads: shared/read-plan.ts.
 */
import type { DynamoPoolRelay } from "../../shared/api/dynamo-pool-relay.ts";
import type { LiveObject } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { classifyForStatus, mergeStatusInputs, type StatusInput } from "../../shared/classify.ts";
import { decideAmong } from "../../shared/decide.ts";
import { readDgds } from "../runtime/dgds.ts";
import { EventType, keyString, productEvent, type DprKey } from "../../shared/events.ts";
import { Reporter } from "../../shared/k8s-events.ts";
import { isConflict } from "../../shared/kube/errors.ts";
import { API_VERSION, KIND, childName } from "../../shared/names.ts";
import { planReads, type Read } from "../../shared/read-plan.ts";
import { SeenVersions, childVersions } from "../../shared/seen-versions.ts";
import { planStatus, remembersReads, type StatusPlanInput } from "../../shared/status-plan.ts";
import type { ObjectRef } from "../../shared/kube/client.ts";
import type { ObservedDeployment } from "../../shared/status.ts";
import {
  coalescing,
  eventFields,
  mustClassify,
  relayEndpointSlices,
  writeStatus,
  type Context,
  type Handler,
  type Result,
} from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/status";
/** Concurrent events for one key race on the status write; the loser re-reads and recomputes at once. */
const CONFLICT_ATTEMPTS = 3;
/** DynamoPoolRelays whose last run's child versions are kept: the scale this product is measured at. */
const SEEN_CAPACITY = 10_000;

const seen = new SeenVersions(SEEN_CAPACITY);

const dprRef = (key: DprKey): ObjectRef => ({
  apiVersion: API_VERSION,
  kind: KIND,
  namespace: key.namespace,
  name: key.name,
});

async function reconcileStatus(
  event: CloudEvent,
  ctx: Context,
  input: StatusInput,
  offRecord = false,
): Promise<Result> {
  const { key } = input;
  const ref = (apiVersion: string, kind: string, name = childName(key.name)) => ({
    apiVersion,
    kind,
    namespace: key.namespace,
    name,
  });

  // 2. Read the DynamoPoolRelay first, so that a status written after this read, from newer
  // children, makes this run's write fail; then what the plan asks for.
  const dpr = await ctx.kube.get<DynamoPoolRelay>(dprRef(key));
  if (!dpr || dpr.metadata.deletionTimestamp) {
    seen.forget(keyString(key));
    return { decision: "Gone", fields: { key } };
  }
  const reads = planReads({ fn: "status", input, dpr, settings: ctx.config.defaults, offRecord });
  const { recorded } = reads;
  if (reads.answer) return { decision: reads.answer, fields: { key, childReads: "none" } };
  const wants = (kind: Read) => reads.reads.includes(kind);
  const get = <T>(kind: Read, apiVersion: string) => (wants(kind) ? ctx.kube.get<T>(ref(apiVersion, kind)) : undefined);
  const [dgds, deployment, service, endpointSlices, serviceAccount, role, roleBinding, configMap] = await Promise.all([
    wants("DynamoGraphDeployment") ? readDgds(ctx.kube, ctx.config.dgdApiVersion, dpr) : [],
    get<LiveObject & ObservedDeployment>("Deployment", "apps/v1"),
    get<LiveObject>("Service", "v1"),
    wants("EndpointSlice") ? relayEndpointSlices(ctx.kube, key) : [],
    get<LiveObject>("ServiceAccount", "v1"),
    get<LiveObject>("Role", "rbac.authorization.k8s.io/v1"),
    get<LiveObject>("RoleBinding", "rbac.authorization.k8s.io/v1"),
    get<LiveObject>("ConfigMap", "v1"),
  ]);

  // 3. Decide.
  const decision = recorded ?? decideAmong(dpr, dgds, ctx.config.defaults);
  // A child not read is absent from the observed world: as the stored status, which vouched for it, has it.
  const unread = recorded ? {} : { serviceAccount, role, roleBinding, configMap };
  const observed: StatusPlanInput["observed"] = {
    ...unread,
    deployment,
    ...(wants("Service") ? { service } : {}),
    endpointSlices,
  };
  const plan = planStatus({
    dpr,
    decision,
    observed,
    changed: input.changed,
    ...(input.failure ? { failure: input.failure } : {}),
    now: ctx.now(),
  });
  // Children off the recorded decision may carry a newer one (a withdrawal that deleted the Service
  // before its status was written): only the DGD can tell, so read everything.
  if (recorded && !plan.reflects) return reconcileStatus(event, ctx, input, true);
  const ready = plan.status.conditions?.find((c) => c.type === "Ready");
  const fields = {
    key,
    childReads: recorded ? "shown" : "all",
    reflects: plan.reflects,
    ready: ready?.status,
    reason: ready?.reason,
    observedGeneration: plan.status.observedGeneration,
  };
  const reply = plan.drift
    ? {
        reply: productEvent(
          EventType.Reconcile,
          { ...key, cause: "Drift" },
          { source: SOURCE, cause: event.id, time: ctx.now() },
        ),
      }
    : {};

  const read = [
    ...(wants("ConfigMap") ? [{ kind: "ConfigMap", objects: [configMap] }] : []),
    { kind: "Deployment", objects: [deployment] },
    ...(wants("Service") ? [{ kind: "Service", objects: [service] }] : []),
    { kind: "EndpointSlice", objects: endpointSlices },
  ];

  // 4. Write only a change.
  const written = plan.write ? await writeStatus(ctx, dpr, plan.status, Reporter.Status) : undefined;
  const statusAt = written ? written.resourceVersion : dpr.metadata.resourceVersion;
  if (remembersReads(plan))
    seen.record(
      keyString(key),
      childVersions(read),
      read.map((r) => r.kind),
      statusAt,
    );
  if (!written) return { decision: "Unchanged", fields, ...reply };
  return { decision: "StatusWritten", fields: { ...fields, ...eventFields(written.events) }, ...reply };
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
  const judge = () => (input.version ? seen.seen(key, input.version) : undefined);
  let reads = planReads({ fn: "status", input, seen: judge() });
  // Equal to what the last run here read, at another version: a run here in flight may have read
  // the child before this version, so the event is judged against what that run leaves.
  if (reads.answer === "SeenIfUnwritten") {
    await runs.settled(input.key);
    const known = judge();
    reads = planReads({ fn: "status", input, seen: known });
    if (reads.answer === "SeenIfUnwritten") {
      const unwritten = seen.unwritten(
        key,
        (await ctx.kube.get<DynamoPoolRelay>(dprRef(input.key)))?.metadata.resourceVersion,
      );
      reads = planReads({ fn: "status", input, seen: known, unwritten });
      if (reads.answer === "Seen")
        return { decision: "Seen", fields: { key: input.key, version: input.version, statusUnchanged: true } };
    }
  }
  if (reads.answer)
    return {
      decision: reads.answer,
      fields: { key: input.key, ...(reads.answer === "ShownByApply" ? {} : { version: input.version }) },
    };
  // With a batch period set (STATUS_BATCH_MS), a child change lets the rest of its burst gather;
  // a report from apply (which comes after the writes whose events it would wait for) starts at once.
  const batch =
    input.changed.length > 0 && ctx.config.statusBatchMs > 0 ? () => ctx.sleep(ctx.config.statusBatchMs) : undefined;
  return runs(input.key, input, (merged) => withRetries(event, ctx, merged), batch);
};
