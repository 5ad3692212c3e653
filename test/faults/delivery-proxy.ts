/**
 * The delivery-fault proxy: an HTTP server on this host that the fault suite puts between Knative
 * and the product. The product's Triggers deliver to it and its sources send to it (each a `uri`
 * subscriber or sink, through-proxies.ts), at a URI naming the real destination; it forwards each
 * delivery there as a pod would send it, and injects the faults DeliveryFaults draws.
 */
import {
  Agent,
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { ObjectRef } from "../../shared/kube/client.ts";
import { DeliveryFaults } from "./delivery-faults.ts";

/** Where this host sends a delivery, and the Host header a pod would send with it. */
export interface Destination {
  url: URL;
  host: string;
}

/** A destination's key: `namespace/name` of the Broker or Knative Service, also its URI's path. */
export const targetOf = (ref: ObjectRef): string => `${ref.namespace}/${ref.name}`;

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** End-to-end headers only: hop-by-hop ones stay on their hop. */
function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)));
}

export class DeliveryProxy {
  readonly faults = new DeliveryFaults();
  private readonly refs = new Map<string, ObjectRef>();
  /** Resolved once: a Broker's or a Service's address does not change during a run, and each delivery would cost API reads. */
  private readonly destinations = new Map<string, Promise<Destination>>();
  private readonly resolve: (ref: ObjectRef) => Promise<Destination>;
  private readonly server: Server;
  private readonly agent = new Agent({ keepAlive: true });
  private readonly timers = new Set<NodeJS.Timeout>();
  private base = "";

  constructor(resolve: (ref: ObjectRef) => Promise<Destination>) {
    this.resolve = resolve;
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => void this.deliver(req, Buffer.concat(chunks), res));
    });
    // Longer than the senders' idle connections live: a connection closed as a delivery is sent on it fails that delivery.
    this.server.keepAliveTimeout = 120_000;
  }

  /** `host`: an address the senders (pods) reach. */
  async listen(host: string): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, host, r));
    this.base = `http://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  /** The URI that delivers to `ref` through this proxy. */
  uri(ref: ObjectRef): string {
    this.refs.set(targetOf(ref), ref);
    return `${this.base}/${targetOf(ref)}`;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.agent.destroy();
    await new Promise((r) => (this.server.close(r), this.server.closeAllConnections()));
  }

  private async deliver(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const target = new URL(req.url ?? "/", "http://proxy").pathname.slice(1);
    const ref = this.refs.get(target);
    if (!ref)
      return void res
        .writeHead(404, { "content-type": "text/plain" })
        .end(`delivery proxy: no destination ${target}\n`);
    let to: Destination;
    try {
      to = await this.destination(target, ref);
    } catch (err) {
      return void res
        .writeHead(502, { "content-type": "text/plain" })
        .end(`delivery proxy: ${target}: ${(err as Error).message}\n`);
    }
    const fault = this.faults.draw(target);
    if (fault === "unavailable")
      return void res.writeHead(503, { "content-type": "text/plain" }).end("delivery proxy: injected unavailability\n");
    const send = (onAnswer: (answer: IncomingMessage) => void) => {
      const headers = { ...forwardHeaders(req.headers), host: to.host, "content-length": String(body.length) };
      const out = request(to.url, { method: req.method, headers, agent: this.agent }, onAnswer);
      out.end(body);
      return out;
    };
    const out = send((answer) => {
      // The receiver did the work; its answer never reaches the sender.
      if (fault === "lostReply") return void (answer.resume(), req.socket.destroy());
      res.writeHead(answer.statusCode ?? 502, forwardHeaders(answer.headers));
      answer.pipe(res);
    });
    // The sender gave up (its delivery timed out): so does the request it caused.
    res.on("close", () => res.writableFinished || out.destroy());
    out.on("error", (err) =>
      res.headersSent
        ? res.destroy()
        : res.writeHead(502, { "content-type": "text/plain" }).end(`delivery proxy: ${target}: ${err.message}\n`),
    );
    if (fault === "lateDuplicate") {
      const t = setTimeout(() => {
        this.timers.delete(t);
        send((answer) => answer.resume()).on("error", () => {});
      }, this.faults.delayMs());
      this.timers.add(t);
    }
  }

  private destination(target: string, ref: ObjectRef): Promise<Destination> {
    let d = this.destinations.get(target);
    if (!d) {
      d = this.resolve(ref);
      // Not yet resolvable (the object not Ready yet): asked again on the next delivery.
      d.catch(() => this.destinations.delete(target));
      this.destinations.set(target, d);
    }
    return d;
  }
}
