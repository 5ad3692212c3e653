/**
 * A fault proxy in front of the real API server, for the functions only (their in-cluster address
 * points here, through-proxies.ts; the tests' admin client goes straight to the API server). It serves TLS
 * with the API server's own certificate, so the functions trust it as they trust the API server,
 * and speaks HTTP/2 as the API server does (and HTTP/1.1 to a client that asks for it), so the
 * functions' faults come over the transport they use in production. A reset is of the one request
 * (its HTTP/2 stream), as a proxy or load balancer resets one; an outage's resets take the whole
 * connection. It forwards every request unchanged, except for the faults it draws from a seeded generator at
 * set rates: added latency, 429 with Retry-After, 500, 503, a reset before the request, a reset
 * mid-body, a write committed whose answer is lost, a hang past every deadline, and outages.
 * It records every request it forwarded, so a test can check what was written where.
 */
import https from "node:https";
import http2 from "node:http2";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { drawOne, seeded } from "./delivery-faults.ts";

export type Fault =
  "latency" | "throttle" | "error500" | "error503" | "resetBefore" | "resetMidBody" | "lostAnswer" | "hang";

/** The chance of each fault per request; `lostAnswer` applies to writes only. */
export type FaultRates = Partial<Record<Fault, number>>;

export type Outage = "unavailable" | "reset" | undefined;

export interface FaultProxyOptions {
  upstream: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  seed: number;
  /** How long a hung request is held before its socket is dropped: past every invocation deadline. */
  hangMs?: number;
  latencyMs?: [number, number];
}

export interface ForwardedRequest {
  method: string;
  path: string;
  status: number | undefined;
  fault: Fault | undefined;
}

const ORDER: Fault[] = [
  "hang",
  "resetBefore",
  "throttle",
  "error500",
  "error503",
  "resetMidBody",
  "lostAnswer",
  "latency",
];

/** Draws at most one fault for a request, in a fixed order, each at its rate (a lost answer for writes only). */
export function drawFault(random: () => number, rates: FaultRates, write: boolean): Fault | undefined {
  return drawOne(random, ORDER, write ? rates : { ...rates, lostAnswer: 0 });
}

export class FaultProxy {
  readonly forwarded: ForwardedRequest[] = [];
  readonly counts: Record<Fault | "outage" | "requests", number> = {
    requests: 0,
    outage: 0,
    latency: 0,
    throttle: 0,
    error500: 0,
    error503: 0,
    resetBefore: 0,
    resetMidBody: 0,
    lostAnswer: 0,
    hang: 0,
  };
  rates: FaultRates = {};
  outage: Outage;
  private readonly random: () => number;
  private readonly server: http2.Http2SecureServer;
  private readonly upstream: URL;
  private readonly agent: https.Agent;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly o: FaultProxyOptions;

  constructor(o: FaultProxyOptions) {
    this.o = o;
    this.random = seeded(o.seed);
    this.upstream = new URL(o.upstream);
    this.agent = new https.Agent({ keepAlive: true, ca: o.ca, maxSockets: 64 });
    this.server = http2.createSecureServer({ cert: o.cert, key: o.key, allowHTTP1: true }, (req, res) =>
      this.handle(req as Request, res as unknown as ServerResponse),
    );
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  /** `host`: an address the functions' pods reach, which the API server's certificate names. */
  async listen(host: string): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, host, r));
    return `https://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    await new Promise((r) => this.server.close(r));
  }

  private later(ms: number, f: () => void): void {
    const t = setTimeout(() => (this.timers.delete(t), f()), ms);
    this.timers.add(t);
  }

  private handle(req: Request, res: ServerResponse): void {
    this.counts.requests++;
    const method = req.method ?? "GET";
    const write = method !== "GET";
    if (this.outage) {
      this.counts.outage++;
      // A session is destroyed on the next turn, not inside the stream's handler: Node 22 aborts
      // when other streams' DATA is still being read (nodejs/node#64850), as when apply sends a wave.
      if (this.outage === "reset")
        return void ("stream" in req ? setImmediate(() => req.stream.session?.destroy()) : req.socket.destroy());
      return status(res, 503, "ServiceUnavailable", "injected outage");
    }
    const fault = drawFault(this.random, this.rates, write);
    if (fault) this.counts[fault]++;
    switch (fault) {
      case "hang":
        return this.later(this.o.hangMs ?? 120_000, () => reset(req));
      case "resetBefore":
        return reset(req);
      case "throttle":
        return status(res, 429, "TooManyRequests", "injected throttling", { "retry-after": "1" });
      case "error500":
        return status(res, 500, "InternalError", "injected internal error");
      case "error503":
        return status(res, 503, "ServiceUnavailable", "injected unavailability");
      case "latency": {
        const [min, max] = this.o.latencyMs ?? [50, 400];
        return this.later(min + Math.floor(this.random() * (max - min)), () => this.forward(req, res, fault));
      }
      default:
        return this.forward(req, res, fault);
    }
  }

  private forward(req: Request, res: ServerResponse, fault: Fault | undefined): void {
    const path = req.url ?? "/";
    const record: ForwardedRequest = { method: req.method ?? "GET", path, status: undefined, fault };
    this.forwarded.push(record);
    // HTTP/2's pseudo-headers (:method, :path, :authority, :scheme) are not HTTP/1.1 headers.
    const headers = {
      ...Object.fromEntries(Object.entries(req.headers).filter(([name]) => !name.startsWith(":"))),
      host: this.upstream.host,
    };
    const up = https.request(
      { host: this.upstream.hostname, port: this.upstream.port, method: req.method, path, headers, agent: this.agent },
      (upRes) => {
        record.status = upRes.statusCode;
        const chunks: Buffer[] = [];
        upRes.on("data", (c: Buffer) => chunks.push(c));
        upRes.on("end", () => {
          const body = Buffer.concat(chunks);
          // The API server has done the work; the client never learns it.
          if (fault === "lostAnswer") return reset(req);
          const outHeaders: Record<string, string | string[] | undefined> = {
            ...upRes.headers,
            "content-length": String(body.length),
          };
          // Connection-specific: HTTP/1.1's own, refused in HTTP/2.
          for (const name of ["transfer-encoding", "connection", "keep-alive"]) delete outHeaders[name];
          res.writeHead(upRes.statusCode ?? 502, outHeaders);
          if (fault === "resetMidBody") {
            res.write(body.subarray(0, Math.floor(body.length / 2)));
            return void setImmediate(() => reset(req));
          }
          res.end(body);
        });
        upRes.on("error", () => reset(req));
      },
    );
    up.on("error", (err) => status(res, 502, "BadGateway", `fault proxy: ${err.message}`));
    req.pipe(up);
  }
}

/** A request over either protocol. */
type Request = IncomingMessage | http2.Http2ServerRequest;

/** Resets the one request: its HTTP/2 stream, or its HTTP/1.1 connection (which carries only it). */
function reset(req: Request): void {
  if ("stream" in req) req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  else req.socket.destroy();
}

function status(
  res: ServerResponse,
  code: number,
  reason: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code }));
}
