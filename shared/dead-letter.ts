/**
 * What a dead-lettered event was about: the pair to reconcile again, or why there is none. The
 * dead-letter function asks for a reconcile of that pair (docs/design.md), so an event the Broker
 * gave up on is not simply logged. Its own request, dead-lettered in turn, is not asked again: the
 * pair is left to the source's requeue (which backs off) and the resync. Asking again three times
 * over tripled the load of a burst that was already failing (27,000 requests at 1,000 pairs).
 */
import type { CloudEvent } from "./cloudevent.ts";
import { APISERVER_TYPES, ApiServerObject, DprKey, EventType, SourceEventType, childOwnerKey } from "./events.ts";
import { canPair } from "./names.ts";

/** The extension that marks the dead-letter function's own requests (value "1"). */
export const DEAD_LETTERS = "deadletters";

export type DeadLetterAsk = { key: DprKey } | { none: string };

const PRODUCT_TYPES: readonly string[] = Object.values(EventType);

export function deadLetterAsk(event: CloudEvent): DeadLetterAsk {
  if (event.extensions[DEAD_LETTERS] !== undefined)
    return { none: "its own request, dead-lettered in turn: left to the requeue and the resync" };
  if (event.type === SourceEventType.Ping) return { none: "a resync tick: the next tick lists every pair again" };
  if (PRODUCT_TYPES.includes(event.type)) {
    const key = DprKey.safeParse(event.data);
    return key.success
      ? { key: { namespace: key.data.namespace, name: key.data.name } }
      : { none: "its data names no DynamoPoolRelay" };
  }
  if (APISERVER_TYPES.includes(event.type)) {
    const obj = ApiServerObject.safeParse(event.data);
    if (!obj.success) return { none: "its data is no Kubernetes object" };
    const { kind, metadata } = obj.data;
    if (kind === "DynamoGraphDeployment" || kind === "DynamoPoolRelay") {
      return canPair(metadata.name)
        ? { key: { namespace: metadata.namespace, name: metadata.name } }
        : { none: `a ${kind} no DynamoPoolRelay can pair with` };
    }
    const owner = childOwnerKey(obj.data);
    return owner ? { key: owner } : { none: `a ${kind} that is none of the product's children` };
  }
  return { none: `an event of type ${event.type}, which the product does not take` };
}
