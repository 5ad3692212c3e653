/**
 * dead-letter: the Triggers' dead-letter sink. It records each event the Broker gave up on, with
 * the failed destination, status and response (knativeerror* extensions), as one log line, and
 * asks for a reconcile of the pair the event was about (shared/dead-letter.ts), sent to the Broker
 * through K_SINK: a dead-letter sink's answer goes nowhere. Replaying the event itself is
 * `poolrelay replay` from these lines.
 */
import { toStructured } from "../../shared/cloudevent.ts";
import { DEAD_LETTERS, deadLetterAsk } from "../../shared/dead-letter.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { Handler } from "../runtime/handler.ts";

const SOURCE = "/dynamo-pool-relay/dead-letter";

export const deadLetter: Handler = async (event, ctx) => {
  const data = event.extensions["knativeerrordata"];
  const logged = {
    destination: event.extensions["knativeerrordest"],
    code: event.extensions["knativeerrorcode"],
    response: data === undefined ? undefined : Buffer.from(data, "base64").toString("utf8"),
    deadEvent: toStructured(event),
  };
  const ask = deadLetterAsk(event);
  if ("none" in ask) return { decision: "DeadLettered", fields: { ...logged, asked: false, why: ask.none } };
  // Its id derives from the dead event's: a redelivered dead letter asks with the same id.
  const request = productEvent(
    EventType.Reconcile,
    { ...ask.key, cause: "DeadLettered" },
    { source: SOURCE, cause: event.id, time: ctx.now() },
  );
  try {
    await ctx.emit({ ...request, extensions: { ...request.extensions, [DEAD_LETTERS]: "1" } });
  } catch (err) {
    // Logged with the dead letter all the same (a failed answer would lose the line): the requeue
    // and the resync are left for the pair.
    return {
      decision: "DeadLettered",
      fields: {
        ...logged,
        asked: false,
        key: ask.key,
        why: `the request could not be sent: ${(err as Error).message}`,
      },
    };
  }
  return { decision: "DeadLettered", fields: { ...logged, asked: true, key: ask.key } };
};
