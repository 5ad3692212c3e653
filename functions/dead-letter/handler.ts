/**
 * dead-letter: the Triggers' dead-letter sink. It records each event the Broker gave up on, with
 * the failed destination, status and response (knativeerror* extensions), as one log line, and
 * acknowledges it: replaying it later is `poolrelay replay` from these lines.
 */
import { toStructured } from "../../shared/cloudevent.ts";
import type { Handler } from "../runtime/handler.ts";

export const deadLetter: Handler = async (event) => {
  const data = event.extensions["knativeerrordata"];
  return {
    decision: "DeadLettered",
    fields: {
      destination: event.extensions["knativeerrordest"],
      code: event.extensions["knativeerrorcode"],
      response: data === undefined ? undefined : Buffer.from(data, "base64").toString("utf8"),
      deadEvent: toStructured(event),
    },
  };
};
