/**
 * The cluster's addresses on one host: an HTTP forward proxy that the local Knative processes and
 * functions use (HTTP_PROXY/HTTPS_PROXY), standing in for cluster DNS and kube-proxy. It maps
 * `<service>.<namespace>.svc.cluster.local` to the local process serving it and sends nothing
 * anywhere else: every upstream is on 127.0.0.0/8, and a host it cannot map is refused and logged.
 * Absolute-form requests (Go's clients for http://) and CONNECT tunnels (Go for https://, Node's
 * env proxy for both) are served.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import type { DeliveryFaults } from "./delivery-faults.ts";

export interface Upstream {
  port: number;
}

/** Where a cluster address is served on this host; undefined refuses it. */
export type Resolver = (host: string, port: number) => Promise<Upstream | undefined>;

export interface ServiceName {
  name: string;
  namespace: string;
}

/** `name.namespace`, `name.namespace.svc` or `name.namespace.svc.<cluster domain>`, as cluster DNS answers them. */
export function parseServiceHost(host: string, clusterDomain = "cluster.local"): ServiceName | undefined {
  const labels = host.toLowerCase().replace(/\.$/, "").split(".");
  const domain = ["svc", ...clusterDomain.split(".")];
  const rest = labels.slice(2);
  if (labels.length < 2 || rest.length > domain.length || rest.some((l, i) => l !== domain[i])) return undefined;
  const [name, namespace] = labels as [string, string];
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  return label.test(name) && label.test(namespace) ? { name, namespace } : undefined;
}

/** host and port of an absolute-form request target or a CONNECT authority. */
export function target(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(authority);
  if (!m) return undefined;
  return { host: m[1]!, port: m[2] ? Number(m[2]) : defaultPort };
}

const HOP_BY_HOP = new Set(["proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"]);

/** End-to-end headers only (RFC 9110 7.6.1): hop-by-hop ones and those the Connection header names stay on their hop. */
export function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = String(headers["connection"] ?? "").split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k.toLowerCase()) && !named.includes(k.toLowerCase())));
}

export interface ProxyOptions {
  resolve: Resolver;
  /** Called once per refused request, with the address that could not be mapped. */
  onRefused: (address: string, why: string) => void;
  /** The fault suite's delivery faults (delivery-faults.ts), for absolute-form requests. */
  faults?: DeliveryFaults;
}

export class ClusterProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly options: ProxyOptions;

  constructor(options: ProxyOptions) {
    this.options = options;
    this.server = createServer((req, res) => {
      const url = URL.canParse(req.url ?? "") ? new URL(req.url!) : undefined;
      const t = url?.protocol === "http:" ? target(url.host, 80) : undefined;
      if (!url || !t) {
        res.writeHead(400, { "content-type": "text/plain" }).end("poolrelay proxy: only absolute-form http:// requests and CONNECT are proxied\n");
        return;
      }
      void this.upstream(`${t.host}:${t.port}`, t).then((up) => {
        if (!up) {
          res.writeHead(403, { "content-type": "text/plain" }).end(`poolrelay proxy: ${t.host}:${t.port} is not a cluster address served on this host\n`);
          return;
        }
        const service = parseServiceHost(t.host);
        const fault = service ? this.options.faults?.draw(service) : undefined;
        if (fault === "unavailable") {
          res.writeHead(503, { "content-type": "text/plain" }).end("poolrelay proxy: injected unavailability\n");
          return;
        }
        const options = { host: "127.0.0.1", port: up.port, method: req.method, path: `${url.pathname}${url.search}`, headers: forwardHeaders(req.headers) };
        const out = request(options, (upRes) => {
          // The receiver did the work; its answer never reaches the sender.
          if (fault === "lostReply") return void (upRes.resume(), req.socket.destroy());
          res.writeHead(upRes.statusCode ?? 502, forwardHeaders(upRes.headers));
          upRes.pipe(res);
        });
        if (fault === "lateDuplicate") {
          const body: Buffer[] = [];
          req.on("data", (c: Buffer) => body.push(c));
          req.on("end", () => {
            setTimeout(() => {
              const copy = request(options, (r) => r.resume());
              copy.on("error", () => {});
              copy.end(Buffer.concat(body));
            }, this.options.faults!.delayMs()).unref();
          });
        }
        // The client gave up (its delivery timed out): so does the request it caused.
        res.on("close", () => res.writableFinished || out.destroy());
        out.on("error", (err) => {
          if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`poolrelay proxy: ${t.host}:${t.port} (127.0.0.1:${up.port}): ${err.message}\n`);
          else res.destroy();
        });
        req.pipe(out);
      });
    });
    this.server.on("connect", (req, socket: Socket, head: Buffer) => {
      this.track(socket);
      const t = target(req.url ?? "", 443);
      socket.on("error", () => socket.destroy());
      void (t ? this.upstream(req.url!, t) : Promise.resolve(undefined)).then((up) => {
        if (!up) {
          socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
          return;
        }
        const upstream = this.track(connect(up.port, "127.0.0.1"));
        let connected = false;
        upstream.on("connect", () => {
          connected = true;
          socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          if (head.length) upstream.write(head);
          upstream.pipe(socket);
          socket.pipe(upstream);
        });
        upstream.on("error", () => (connected ? socket.destroy() : socket.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")));
        socket.on("close", () => upstream.destroy());
        upstream.on("close", () => connected && socket.destroy());
      });
    });
    this.server.on("connection", (s: Socket) => this.track(s));
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    return socket;
  }

  private async upstream(address: string, t: { host: string; port: number }): Promise<Upstream | undefined> {
    try {
      const up = await this.options.resolve(t.host, t.port);
      if (!up) this.options.onRefused(address, "no local process serves it");
      return up;
    } catch (err) {
      this.options.onRefused(address, (err as Error).message);
      return undefined;
    }
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
