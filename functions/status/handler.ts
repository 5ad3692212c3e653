/**
 * status: recomputes one DynamoPoolRelay's status from the observed world whenever the apply
 * function reports or one of its children changes, and writes it only when it differs, with
 * optimistic concurrency. observedGeneration advances only when the children carry the decision
 * for the current generation, so a failed apply or withdrawal never advances it. When a child
 * event shows the children drifting from the decision, it asks for a reconcile.
 */
import type { DynamoPoolRelay, DynamoPoolRelayStatus } from "../../shared/api/dynamo-pool-relay.ts";
import { reflectsDecision, withAppliedHash, type LiveObject } from "../../shared/apply-plan.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { stableJson } from "../../shared/connection-revision.ts";
import { decide } from "../../shared/decide.ts";
import { APISERVER_TYPES, ApiServerObject, DATA_SCHEMAS, DprKey, EventType, childOwnerKey, parseData, productEvent } from "../../shared/events.ts";
import { API_VERSION, KIND, childName } from "../../shared/names.ts";
import { renderChildren } from "../../shared/render/index.ts";
import { computeStatus, type ObservedEndpointSlice } from "../../shared/status.ts";
import { isConflict } from "../../shared/kube/errors.ts";
import { BadEvent, mustParse, type Context, type Handler, type Result } from "../runtime/handler.ts";

export const SOURCE = "/dynamo-pool-relay/status";
const CHILD_KINDS = ["Deployment", "Service", "EndpointSlice"];

/** Which DynamoPoolRelay the event is about, and whether it came from a child. */
function keyOf(event: CloudEvent): { key: DprKey; fromChild: boolean } {
  if (event.type in DATA_SCHEMAS && event.type !== EventType.Reconcile) {
    const data = mustParse(parseData(event, DATA_SCHEMAS[event.type as keyof typeof DATA_SCHEMAS] as typeof DprKey));
    return { key: { namespace: data.namespace, name: data.name }, fromChild: false };
  }
  if (APISERVER_TYPES.includes(event.type)) {
    const obj = mustParse(parseData(event, ApiServerObject));
    if (!CHILD_KINDS.includes(obj.kind)) throw new BadEvent(422, `status handles ${CHILD_KINDS.join(", ")} events, got kind ${obj.kind}`);
    const key = childOwnerKey(obj);
    if (!key) throw new BadEvent(422, `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name} is not managed by dynamo-pool-relay`);
    return { key, fromChild: true };
  }
  throw new BadEvent(400, `status handles ${EventType.Applied}, ${EventType.Withdrawn}, ${EventType.Rejected} and child resource events, got type ${event.type}`);
}

/** Concurrent events for one key race on the status write; the loser re-reads and recomputes at once. */
const CONFLICT_ATTEMPTS = 3;

export const status: Handler = async (event, ctx) => {
  // 1. Parse.
  const { key, fromChild } = keyOf(event);
  for (let attempt = 1; ; attempt++) {
    try {
      return await reconcileStatus(event, ctx, key, fromChild);
    } catch (err) {
      if (!isConflict(err) || attempt >= CONFLICT_ATTEMPTS) throw err;
    }
  }
};

async function reconcileStatus(event: CloudEvent, ctx: Context, key: DprKey, fromChild: boolean): Promise<Result> {
  const ref = (apiVersion: string, kind: string, name = childName(key.name)) => ({ apiVersion, kind, namespace: key.namespace, name });

  // 2. Read the DynamoPoolRelay, its DGD and the children status is made of.
  const [dpr, dgd, configMap, deployment, service, slices] = await Promise.all([
    ctx.kube.get<DynamoPoolRelay>(ref(API_VERSION, KIND, key.name)),
    ctx.kube.get(ref(ctx.config.dgdApiVersion, "DynamoGraphDeployment", key.name)),
    ctx.kube.get<LiveObject>(ref("v1", "ConfigMap")),
    ctx.kube.get<LiveObject & { metadata: { generation?: number } }>(ref("apps/v1", "Deployment")),
    ctx.kube.get<LiveObject>(ref("v1", "Service")),
    ctx.kube.list<ObservedEndpointSlice>("discovery.k8s.io/v1", "EndpointSlice", key.namespace, `kubernetes.io/service-name=${childName(key.name)}`),
  ]);
  if (!dpr || dpr.metadata.deletionTimestamp) return { decision: "Gone", fields: { key } };

  // 3. Decide: the decision, whether the children carry it, and the status.
  const decision = decide(dpr, dgd, ctx.config.defaults);
  const desired = decision.action === "apply" ? renderChildren(decision).map(withAppliedHash) : [];
  const live = new Map([["ConfigMap", configMap], ["Deployment", deployment], ["Service", service]]);
  const reflects = reflectsDecision(decision, desired, live, dpr.metadata.uid);
  const previous = dpr.status?.observedGeneration;
  const generation = dpr.metadata.generation ?? 1;
  const observedGeneration = reflects ? Math.max(previous ?? 0, generation) : previous;
  const next: DynamoPoolRelayStatus = computeStatus({
    dpr,
    decision,
    observed: { ...(deployment ? { deployment } : {}), ...(service ? { service } : {}), endpointSlices: slices },
    previous: dpr.status,
    observedGeneration,
    now: ctx.now(),
  });
  const drift = fromChild && decision.action === "apply" && !reflects;
  const reply = drift ? productEvent(EventType.Reconcile, { ...key, cause: "Drift" }, { source: SOURCE, cause: event.id, time: ctx.now() }) : undefined;
  const ready = next.conditions?.find((c) => c.type === "Ready");
  const fields = { key, reflects, ready: ready?.status, reason: ready?.reason, observedGeneration };

  // 4. Write only a change; the resourceVersion read above makes a concurrent writer's newer status win (409, retried).
  if (stableJson(next) === stableJson(dpr.status ?? {})) return { decision: "Unchanged", fields, ...(reply ? { reply } : {}) };
  await ctx.kube.replaceStatus({ ...dpr, status: next } as never);
  return { decision: "StatusWritten", fields, ...(reply ? { reply } : {}) };
}
