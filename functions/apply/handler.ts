/**
 * apply: converges one DynamoPoolRelay's children on a reconcile request: decides from the
 * DynamoPoolRelay and its DGD, applies the children that differ or withdraws the Service, and
 * writes the status those writes make. What it reads: shared/read-plan.ts.
 */
import type { DynamoPoolRelay } from "../../shared/api/dynamo-pool-relay.ts";
import {
  desiredChildren,
  planAbsent,
  planApply,
  planSources,
  writeWaves,
  type ApplyPlan,
  type LiveObject,
} from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { classifyForApply } from "../../shared/classify.ts";
import { decideAmong, type Decision } from "../../shared/decide.ts";
import { readDgds } from "../runtime/dgds.ts";
import {
  EventType,
  productEvent,
  type EmitContext,
  type ReconcileCause,
  type ReconcileData,
} from "../../shared/events.ts";
import {
  Reporter,
  applied,
  foreignChildren,
  rejected,
  renderEvent,
  withdrawn,
  type Occurrence,
} from "../../shared/k8s-events.ts";
import { ApiError, isConflict } from "../../shared/kube/errors.ts";
import { APPLY_FIELD_MANAGER, API_VERSION, KIND, childName } from "../../shared/names.ts";
import type { VouchedSources } from "../../shared/vouched-status.ts";
import { ownership } from "../../shared/ownership.ts";
import { planReads, type ReadPlan, type StoredDpr } from "../../shared/read-plan.ts";
import type { KubeObject } from "../../shared/render/index.ts";
import type { KubeObject as ReadObject } from "../../shared/kube/client.ts";
import { unobserved } from "../../shared/resync.ts";
import {
  endpointsBehind,
  observedChildren,
  planStatus,
  sourcesStatus,
  type StatusPlan,
} from "../../shared/status-plan.ts";
import type { ObservedDeployment, ObservedEndpointSlice } from "../../shared/status.ts";
import {
  coalescing,
  eventFields,
  mustClassify,
  recordEvent,
  relayEndpointSlices,
  writeStatus,
  type Context,
  type EventOutcome,
  type Handler,
  type Result,
} from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/apply";

/**
 * Requests for one key at once (a DGD and its DynamoPoolRelay changed together, drift seen by
 * several child events) share runs: apply decides from what it reads, never from the request. The
 * requests' causes only say how much to read: the run that answers them reads for all of them.
 */
const requests = coalescing<ReconcileData, readonly ReconcileCause[]>((earlier = [], later) => [
  ...new Set([...earlier, ...later]),
]);

export const apply: Handler = async (event, ctx) => {
  // 1. Parse: a reconcile request, or a DynamoPoolRelay's change, with a valid key.
  const { observed, ...key } = mustClassify(classifyForApply(event));
  // As the change event carries it, the generation is observed or the object deleted: apply would
  // read the DynamoPoolRelay only to stop there (a late or repeated event).
  if (observed) return { decision: "Observed", fields: { key, from: "event" } };
  return requests(key, [key.cause], (asked) => converge(event, ctx, key, asked));
};

/** What a run's replies and Events are made of: the outcome's identity, the reply's context, the Event writer. */
interface Run {
  outcome: { namespace: string; name: string; uid: string; generation: number };
  emit: EmitContext;
  report: (occurrence: Occurrence, lookFirst?: boolean) => Promise<EventOutcome>;
}

async function converge(
  event: CloudEvent,
  ctx: Context,
  key: ReconcileData,
  asked: readonly ReconcileCause[],
): Promise<Result> {
  const emit = { source: SOURCE, cause: event.id, time: ctx.now() };

  // 2. Read the truth.
  const truth = await readPair(ctx, key, asked);
  if (truth === "Observed" || truth === "Gone") return { decision: truth, fields: { key } };
  const { dpr, dgds } = truth;
  const outcome = {
    namespace: key.namespace,
    name: key.name,
    uid: dpr.metadata.uid ?? "",
    generation: dpr.metadata.generation ?? 1,
  };
  const report = (occurrence: Occurrence, lookFirst = false) =>
    recordEvent(ctx.kube, renderEvent(dpr, occurrence, Reporter.Apply, ctx.now()), lookFirst);

  // 3. Decide.
  const decision = decideAmong(dpr, dgds, ctx.config.defaults);
  if (decision.action === "reject") {
    const data = { ...outcome, reason: "InvalidSpec", message: decision.message } as const;
    const events = [await report(rejected("InvalidSpec", decision.message), true)];
    return {
      decision: "Rejected",
      reply: productEvent(EventType.Rejected, data, emit),
      fields: { key, ...eventFields(events) },
    };
  }

  const run: Run = { outcome, emit, report };
  if (decision.action === "withdraw") return withdraw(ctx, dpr, decision, key, asked, run);

  // 4b. A rollout the stored status vouches for writes the sources document alone, reading no child.
  const desired = desiredChildren(decision);
  const reads = planReads({ fn: "apply", causes: asked, dpr, decision });
  const vouched = typeof reads.unread === "object" ? reads.unread.sources : undefined;
  const rolled = vouched && (await rollout(ctx, dpr, decision, desired, vouched, key, run));
  if (rolled) return rolled;

  // 4c. Apply the children that are missing or differ, in waves. An unread write refused (the
  // rollout's ConfigMap changed since, a child to create exists): the status's word is out of date.
  const refused = () => planReads({ fn: "apply", causes: asked, dpr, decision, unreadRefused: true });
  const applied = await applyChildren(ctx, key, dpr, desired, vouched ? refused() : reads, refused);
  if ("refused" in applied) {
    const message = applied.refused.message;
    const data = { ...outcome, reason: "ApplyFailed", message } as const;
    const events = [await report(rejected("ApplyFailed", message), true)];
    return {
      decision: "ApplyFailed",
      reply: productEvent(EventType.Rejected, data, emit),
      fields: { key, error: message, ...eventFields(events) },
    };
  }
  const { plan, live, written, childReads, endpointSlices } = applied;
  // The status these children make, from what the writes returned and the rest as read.
  const current = desired.map((d, i) => written.get(d.kind) ?? live[i]);
  const status = planStatus({
    dpr,
    decision,
    observed: observedChildren(desired, current, endpointSlices),
    changed: [],
    now: ctx.now(),
  });
  if (plan.apply.length === 0 && plan.skipped.length === 0 && !unobserved(dpr) && !status.write) {
    // Nothing written, and the status already shows what these children make of this generation:
    // status has nothing to do either, so no report (a periodic reconcile of a converged pair ends here).
    return { decision: "Converged", fields: { key } };
  }
  return answer(ctx, dpr, run, key, {
    desired,
    plan,
    serviceUid: written.get("Service")?.metadata["uid"] as string | undefined,
    status,
    childReads,
  });
}

/** The DynamoPoolRelay and its DGD, as the request's causes ask (shared/read-plan.ts); the DynamoPoolRelay first when only its change was asked about. */
async function readPair(
  ctx: Context,
  key: ReconcileData,
  asked: readonly ReconcileCause[],
): Promise<{ dpr: DynamoPoolRelay & StoredDpr; dgds: ReadObject[] } | "Gone" | "Observed"> {
  const readDpr = () =>
    ctx.kube.get<DynamoPoolRelay>({ apiVersion: API_VERSION, kind: KIND, namespace: key.namespace, name: key.name });
  const readDgd = () =>
    ctx.kube.get({
      apiVersion: ctx.config.dgdApiVersion,
      kind: "DynamoGraphDeployment",
      namespace: key.namespace,
      name: key.name,
    });
  const first = planReads({ fn: "apply", causes: asked });
  const [dpr, dgd] = await Promise.all([
    readDpr(),
    first.reads.includes("DynamoGraphDeployment") ? readDgd() : undefined,
  ]);
  const live = !dpr || dpr.metadata.deletionTimestamp ? undefined : dpr;
  const then = planReads({ fn: "apply", causes: asked, dpr: live ?? "gone" });
  if (then.answer || !live) return then.answer === "Observed" ? "Observed" : "Gone";
  // A selector's DGDs are known only once the DynamoPoolRelay is read: one LIST after it.
  if (live.spec.dgdSelector) return { dpr: live, dgds: await readDgds(ctx.kube, ctx.config.dgdApiVersion, live) };
  const one = then.reads.includes("DynamoGraphDeployment") ? await readDgd() : dgd;
  return { dpr: live, dgds: one ? [one] : [] };
}

/**
 * A plan, the children it was made from (all undefined when none was read), what the API server
 * answered each write with, and the EndpointSlices behind the Service as read (none when it was not).
 */
interface Applied {
  plan: ApplyPlan;
  live: (LiveObject | undefined)[];
  written: Map<string, LiveObject>;
  childReads: "all" | "none";
  endpointSlices: ObservedEndpointSlice[];
}

/**
 * Applies the children as the read plan says: created unread, each only if absent, or every child
 * read and those missing or differing applied; a creation that finds one existing (409) falls back
 * to reading them (`refused`). A write the API server refuses for good is answered, not thrown.
 */
async function applyChildren(
  ctx: Context,
  key: ReconcileData,
  dpr: DynamoPoolRelay,
  desired: readonly KubeObject[],
  reads: ReadPlan,
  refused: () => ReadPlan,
): Promise<Applied | { refused: ApiError }> {
  if (reads.unread === "createAbsent") {
    const absent = planAbsent(desired);
    const created = await writeChildren(ctx, absent).catch((err: unknown) => {
      if (isConflict(err)) return undefined;
      throw err;
    });
    // A Service just created has no EndpointSlices yet (shared/status-plan.ts, endpointsBehind).
    if (created)
      return "refused" in created
        ? created
        : {
            plan: absent,
            live: desired.map(() => undefined),
            written: created,
            childReads: "none",
            endpointSlices: [],
          };
    reads = refused();
  }
  // The EndpointSlices listed together with the children: the Service is there on almost every run
  // that reads, and a cold process pays a round trip for each wait (npm run bench).
  const [live, slices] = await Promise.all([
    Promise.all(
      desired.map((d) =>
        reads.reads.includes(d.kind as never)
          ? ctx.kube.get<LiveObject>({ ...d, namespace: d.metadata.namespace, name: d.metadata.name })
          : Promise.resolve(undefined),
      ),
    ),
    reads.reads.includes("EndpointSlice") ? relayEndpointSlices(ctx.kube, key) : [],
  ]);
  const plan = planApply(desired, live, dpr.metadata.uid);
  const written = await writeChildren(ctx, plan);
  const endpointSlices = endpointsBehind(live[desired.findIndex((d) => d.kind === "Service")]) ? slices : [];
  return "refused" in written ? written : { plan, live, written, childReads: "all", endpointSlices };
}

/**
 * Writes a plan's children, wave after wave (writeWaves). The Deployment carries the user's opaque
 * fields (tolerations, affinity, env sources), so a server dry-run checks it first: a spec the API
 * server refuses writes nothing and is reported instead of retried. A wave with a failed write
 * ends the run after its other writes are answered; a transient failure is thrown before a refusal,
 * so the retry finds what the refusal was about.
 */
async function writeChildren(ctx: Context, plan: ApplyPlan): Promise<Map<string, LiveObject> | { refused: ApiError }> {
  const written = new Map<string, LiveObject>();
  try {
    const deployment = plan.apply.find((a) => a.object.kind === "Deployment");
    if (deployment)
      await ctx.kube.apply(deployment.object, APPLY_FIELD_MANAGER, { force: deployment.force, dryRun: true });
    for (const wave of writeWaves(plan.apply)) {
      const results = await Promise.allSettled(
        wave.map(({ object, force }) => ctx.kube.apply<LiveObject>(object, APPLY_FIELD_MANAGER, { force })),
      );
      const failed: unknown[] = [];
      results.forEach((r, i) =>
        r.status === "fulfilled" ? written.set(wave[i]!.object.kind, r.value) : failed.push(r.reason),
      );
      if (failed.length > 0) throw failed.find((err) => !(err instanceof ApiError) || err.transient) ?? failed[0];
    }
  } catch (err) {
    if (!(err instanceof ApiError) || err.transient) throw err;
    return { refused: err };
  }
  return written;
}

/**
 * A rollout the stored status vouches for: the next sources document is written over the very
 * ConfigMap version the status found, and the status shown with it. Undefined when that write is
 * refused (409: the ConfigMap changed since): the status's word is out of date.
 */
async function rollout(
  ctx: Context,
  dpr: DynamoPoolRelay,
  decision: Extract<Decision, { action: "apply" }>,
  desired: readonly KubeObject[],
  vouched: VouchedSources,
  key: ReconcileData,
  run: Run,
): Promise<Result | undefined> {
  const plan = planSources(desired, decision, vouched);
  // The same sources again (the DGD moved back, or another run wrote them): the status shows them.
  if (plan.apply.length === 0) return { decision: "Converged", fields: { key, childReads: "none" } };
  let configMap: LiveObject;
  try {
    configMap = await ctx.kube.apply<LiveObject>(plan.apply[0]!.object, APPLY_FIELD_MANAGER, { force: true });
  } catch (err) {
    if (!(err instanceof ApiError) || (err.transient && err.status !== 409)) throw err;
    return undefined;
  }
  return answer(ctx, dpr, run, key, {
    desired,
    plan,
    status: sourcesStatus(dpr, decision, configMap),
    childReads: "none",
  });
}

/**
 * Shows the status the writes make, replies what was applied, and reports it as Kubernetes Events
 * (a publication named by the UID of the Service it created, `serviceUid`).
 */
async function answer(
  ctx: Context,
  dpr: DynamoPoolRelay,
  { outcome, emit, report }: Run,
  key: ReconcileData,
  {
    desired,
    plan,
    serviceUid,
    status,
    childReads,
  }: {
    desired: readonly KubeObject[];
    plan: ApplyPlan;
    serviceUid?: string | undefined;
    status: StatusPlan;
    childReads: "all" | "none";
  },
): Promise<Result> {
  const shown = await showStatus(ctx, dpr, status);
  const data = {
    ...outcome,
    applied: plan.apply.map((a) => a.object.kind),
    unchanged: desired.map((d) => d.kind).filter((kind) => plan.unchanged.includes(kind)),
    skipped: plan.skipped,
    ...(shown.written ? { statusWritten: true as const } : {}),
  };
  // An apply that wrote nothing writes no Event either: the steady state stays without writes.
  const events = [
    ...(plan.apply.length > 0
      ? [
          await report(
            applied(
              dpr,
              plan.apply.map((a) => a.object),
              desired,
              serviceUid,
            ),
          ),
        ]
      : []),
    ...(plan.skipped.length > 0 ? [await report(foreignChildren(plan.skipped), true)] : []),
    ...shown.events,
  ];
  const fields = {
    key,
    childReads,
    applied: data.applied,
    skipped: plan.skipped.length,
    statusShown: shown.outcome,
    ...eventFields(events),
  };
  return { decision: "Applied", reply: productEvent(EventType.Applied, data, emit), fields };
}

/**
 * 4a. Withdraws the Service, only if this DynamoPoolRelay controls it, and only that very object,
 * and shows the withdrawal's status: the Relay pods that still run, and their endpoints behind a
 * Service that stays (someone else's).
 */
async function withdraw(
  ctx: Context,
  dpr: DynamoPoolRelay & StoredDpr,
  decision: Extract<Decision, { action: "withdraw" }>,
  key: ReconcileData,
  causes: readonly ReconcileCause[],
  run: Run,
): Promise<Result> {
  const { outcome, emit, report } = run;
  const ref = { apiVersion: "v1", kind: "Service", namespace: key.namespace, name: childName(key.name) };
  const reads = planReads({ fn: "apply", causes, dpr, decision }).reads;
  const [live, deployment] = await Promise.all([
    reads.includes("Service") ? ctx.kube.get<LiveObject & { metadata: { uid: string } }>(ref) : undefined,
    reads.includes("Deployment")
      ? ctx.kube.get<LiveObject & ObservedDeployment>({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: key.namespace,
          name: childName(key.name),
        })
      : undefined,
  ]);
  const owner = ownership(live, dpr.metadata.uid);
  let service: "deleted" | "absent" | "notOwned" = owner === "foreign" ? "notOwned" : "absent";
  if (owner === "ours" && (await ctx.kube.deleteExact(ref, live!.metadata.uid)) === "deleted") service = "deleted";
  const kept = service === "deleted" ? undefined : live;
  const slices = planReads({ fn: "apply", causes, dpr, decision, serviceKept: endpointsBehind(kept) }).reads.includes(
    "EndpointSlice",
  );
  const observed = {
    deployment,
    service: kept,
    endpointSlices: slices ? await relayEndpointSlices(ctx.kube, key) : [],
  };
  const status = planStatus({ dpr, decision, observed, changed: [], now: ctx.now() });
  // An absent or foreign Service is what the last withdrawal left: with the status showing it, nothing to report.
  if (service !== "deleted" && !status.write)
    return { decision: "Converged", fields: { key, reason: decision.reason, service } };
  const shown = await showStatus(ctx, dpr, status);
  const data = {
    ...outcome,
    reason: decision.reason,
    message: decision.message,
    service,
    ...(shown.written ? { statusWritten: true as const } : {}),
  } as const;
  const events = [
    ...(service === "deleted" ? [await report(withdrawn(ref.name, live!.metadata.uid, decision.message))] : []),
    ...shown.events,
  ];
  return {
    decision: "Withdrawn",
    reply: productEvent(EventType.Withdrawn, data, emit),
    fields: { key, reason: decision.reason, service, statusShown: shown.outcome, ...eventFields(events) },
  };
}

/**
 * Writes the status these writes make, so no status run reads the children again; over the
 * DynamoPoolRelay version read before every child, so it fails if anyone wrote the status since.
 * When it fails, or the status already looks right, apply's report brings a status run instead.
 */
async function showStatus(
  ctx: Context,
  dpr: DynamoPoolRelay,
  plan: StatusPlan,
): Promise<{ written: boolean; outcome: string; events: EventOutcome[] }> {
  if (!plan.write) return { written: false, outcome: "left to status", events: [] };
  try {
    return {
      written: true,
      outcome: "written",
      events: (await writeStatus(ctx, dpr, plan.status, Reporter.Apply)).events,
    };
  } catch (err) {
    // Refused (403, 422): as any refused call, a failure to see, not to work around.
    if (!(err instanceof ApiError) || !(err.transient || err.status === 404)) throw err;
    return { written: false, outcome: `left to status: ${err.message}`, events: [] };
  }
}
