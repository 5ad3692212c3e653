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

export class LocalBroker {
  private readonly routes: Route[];
  private readonly options: BrokerOptions;
  private readonly inFlight = new Set<Promise<void>>();
  private server: Server | undefined;

  constructor(routes: Route[], options: BrokerOptions = {}) {
    this.routes = routes;
    this.options = options;
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
    for (; attempt <= retries; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, backoffMs(route.delivery, attempt - 1)));
      const { headers, body } = toBinary(event);
      try {
        const res = await fetch(route.url, { method: "POST", headers: { ...headers, "prefer": "reply" }, body, signal: AbortSignal.timeout(timeout) });
        status = res.status;
        const text = Buffer.from(await res.arrayBuffer());
        if (status >= 200 && status < 300) {
          const reply = status === 200 && res.headers.get("ce-id") ? fromHttp(Object.fromEntries(res.headers), text) : undefined;
          if (reply && !reply.ok) {
            status = 502;
            error = `malformed reply: ${reply.error}`;
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

  async close(): Promise<void> {
    await this.idle();
    await new Promise<void>((resolve) => (this.server ? (this.server.close(() => resolve()), this.server.closeAllConnections()) : resolve()));
  }
}
