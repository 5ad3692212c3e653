/**
 * What a function is: a handler from one validated CloudEvent and a context to a result. The
 * handler throws BadEvent for input that can never succeed; anything else it throws is retried.
 */
import type { CloudEvent } from "../../shared/cloudevent.ts";
import type { Classified } from "../../shared/classify.ts";
import type { Config } from "../../shared/config.ts";
import type { KubeClient } from "../../shared/kube/client.ts";

export interface Context {
  kube: KubeClient;
  config: Config;
  /** RFC 3339, second precision: condition times and event times. */
  now(): string;
  /** Sends an event to the configured sink (the Broker), failing unless it is accepted. */
  emit(event: CloudEvent): Promise<void>;
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

export function mustClassify<T>(classified: Classified<T>): T {
  if (!classified.ok) throw new BadEvent(classified.status, classified.error);
  return classified.value;
}
