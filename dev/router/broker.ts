/**
 * A local stand-in for a Knative Broker: an ingress that accepts CloudEvents, delivery to every
 * matching Trigger's subscriber with the Trigger's retry policy, and replies fed back in as new
 * events (with the Broker's TTL guard against reply loops). Development and tests only.
 */
import { createServer, type Server } from "node:http";
import { fromHttp, toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { backoffMs, durationMs, retriable, type Delivery } from "./delivery.ts";
import { matchesTrigger, type TriggerFilter } from "./filters.ts";

export interface Route {
  trigger: string;
  filter: TriggerFilter;
  url: string;
  delivery: Delivery;
}

export interface DeliveryRecord {
  trigger: string;
  event: CloudEvent;
  status: number;
  attempts: number;
  reply?: CloudEvent;
  error?: string;
}

export interface BrokerOptions {
  /** Every event that enters the broker (from sources, the ingress or as a reply), once. */
  onEvent?: (event: CloudEvent) => void;
  onDelivery?: (record: DeliveryRecord) => void;
  /** Hops a chain of replies may take, as the Broker's knativebrokerttl. */
  ttl?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

export class LocalBroker {
  private routes: Route[];
  private readonly options: BrokerOptions;
  private readonly inFlight = new Set<Promise<void>>();
  /** Aborts in-flight deliveries and backoff waits on close, so stopping never waits out retries. */
  private readonly closing = new AbortController();
  private server: Server | undefined;

  constructor(routes: Route[], options: BrokerOptions = {}) {
    this.routes = routes;
    this.options = options;
  }

  /** Routes known only once the subscribers listen (their ports come after the ingress's). */
  setRoutes(routes: Route[]): void {
    this.routes = routes;
  }

  /** Triggers whose filters match the event. */
  matching(event: CloudEvent): Route[] {
    return this.routes.filter((r) => matchesTrigger(r.filter, event));
  }

  /** Delivers to every matching Trigger and follows replies; resolves when the whole chain is done. */
  async publish(event: CloudEvent, ttl = this.options.ttl ?? 255): Promise<void> {
    if (ttl <= 0) return;
    this.options.onEvent?.(event);
    await Promise.all(this.matching(event).map((route) => this.deliver(route, event, ttl)));
  }

  private async deliver(route: Route, event: CloudEvent, ttl: number): Promise<void> {
    const retries = route.delivery.retry ?? 0;
    const timeout = durationMs(route.delivery.timeout) ?? DEFAULT_TIMEOUT_MS;
    let status = 0;
    let error: string | undefined;
    let attempt = 0;
    const closing = this.closing.signal;
    for (; attempt <= retries && !closing.aborted; attempt++) {
      if (attempt > 0) await sleep(backoffMs(route.delivery, attempt - 1), closing);
      if (closing.aborted) break;
      const { headers, body } = toBinary(event);
      try {
        const signal = AbortSignal.any([AbortSignal.timeout(timeout), closing]);
        const res = await fetch(route.url, { method: "POST", headers: { ...headers, "prefer": "reply" }, body, signal });
        status = res.status;
        const text = Buffer.from(await res.arrayBuffer());
        if (status >= 200 && status < 300) {
          // As the Broker's filter: a 2xx body must be a CloudEvent (binary or structured), which
          // becomes a new event; any other body is a bad gateway (502), retried.
          const reply = text.length > 0 ? fromHttp(Object.fromEntries(res.headers), text) : undefined;
          if (reply && !reply.ok) {
            status = 502;
            error = `the subscriber answered ${res.status} with a body that is not a CloudEvent: ${reply.error}`;
            continue;
          }
          this.options.onDelivery?.({ trigger: route.trigger, event, status, attempts: attempt + 1, ...(reply ? { reply: reply.value } : {}) });
          if (reply) await this.publish(reply.value, ttl - 1);
          return;
        }
        error = text.toString("utf8").slice(0, 1024);
        if (!retriable(status)) break;
      } catch (err) {
        status = 0;
        error = (err as Error).message;
      }
    }
    // Out of retries or not retriable: what a dead-letter sink would receive.
    this.options.onDelivery?.({ trigger: route.trigger, event, status, attempts: Math.min(attempt + 1, retries + 1), ...(error ? { error } : {}) });
  }

  /** Accepts an event as broker ingress does: delivery happens in the background (see idle()). */
  accept(event: CloudEvent): void {
    const p = this.publish(event).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** An ingress on 127.0.0.1 that accepts events like broker ingress (202) and delivers them in the background. */
  async listen(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const parsed = fromHttp(req.headers, Buffer.concat(chunks));
        if (req.method !== "POST" || !parsed.ok) {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: parsed.ok ? "POST only" : parsed.error }));
          return;
        }
        this.accept(parsed.value);
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    const address = this.server.address();
    return `http://127.0.0.1:${typeof address === "object" && address ? address.port : port}/`;
  }

  /** Resolves when every event accepted by the ingress has been delivered. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops: in-flight deliveries are abandoned (as a Broker going away would), then the ingress closes. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.idle();
    await new Promise<void>((resolve) => (this.server ? (this.server.close(() => resolve()), this.server.closeAllConnections()) : resolve()));
  }
}
