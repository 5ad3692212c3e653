/**
 * A fault proxy in front of the real API server, for the functions only (their ServiceAccount
 * kubeconfigs point here; the tests' admin client goes straight to the API server). It serves TLS
 * with the API server's own certificate, so the functions trust it as they trust the API server,
 * and forwards every request unchanged, except for the faults it draws from a seeded generator at
 * set rates: added latency, 429 with Retry-After, 500, 503, a reset before the request, a reset
 * mid-body, a write committed whose answer is lost, a hang past every deadline, and outages.
 * It records every request it forwarded, so a test can check what was written where.
 */
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { drawOne, seeded } from "../../dev/knative/delivery-faults.ts";

export type Fault = "latency" | "throttle" | "error500" | "error503" | "resetBefore" | "resetMidBody" | "lostAnswer" | "hang";

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

const ORDER: Fault[] = ["hang", "resetBefore", "throttle", "error500", "error503", "resetMidBody", "lostAnswer", "latency"];

/** Draws at most one fault for a request, in a fixed order, each at its rate (a lost answer for writes only). */
export function drawFault(random: () => number, rates: FaultRates, write: boolean): Fault | undefined {
  return drawOne(random, ORDER, write ? rates : { ...rates, lostAnswer: 0 });
}

export class FaultProxy {
  readonly forwarded: ForwardedRequest[] = [];
  readonly counts: Record<Fault | "outage" | "requests", number> = {
    requests: 0, outage: 0, latency: 0, throttle: 0, error500: 0, error503: 0, resetBefore: 0, resetMidBody: 0, lostAnswer: 0, hang: 0,
  };
  rates: FaultRates = {};
  outage: Outage;
  private readonly random: () => number;
  private readonly server: https.Server;
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
    this.server = https.createServer({ cert: o.cert, key: o.key }, (req, res) => this.handle(req, res));
    this.server.on("connection", (s: Socket) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.counts.requests++;
    const method = req.method ?? "GET";
    const write = method !== "GET";
    if (this.outage) {
      this.counts.outage++;
      if (this.outage === "reset") return void req.socket.destroy();
      return status(res, 503, "ServiceUnavailable", "injected outage");
    }
    const fault = drawFault(this.random, this.rates, write);
    if (fault) this.counts[fault]++;
    switch (fault) {
      case "hang":
        return this.later(this.o.hangMs ?? 120_000, () => req.socket.destroy());
      case "resetBefore":
        return void req.socket.destroy();
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

  private forward(req: IncomingMessage, res: ServerResponse, fault: Fault | undefined): void {
    const path = req.url ?? "/";
    const record: ForwardedRequest = { method: req.method ?? "GET", path, status: undefined, fault };
    this.forwarded.push(record);
    const headers = { ...req.headers, host: this.upstream.host };
    const up = https.request({ host: this.upstream.hostname, port: this.upstream.port, method: req.method, path, headers, agent: this.agent }, (upRes) => {
      record.status = upRes.statusCode;
      const chunks: Buffer[] = [];
      upRes.on("data", (c: Buffer) => chunks.push(c));
      upRes.on("end", () => {
        const body = Buffer.concat(chunks);
        // The API server has done the work; the client never learns it.
        if (fault === "lostAnswer") return void req.socket.destroy();
        const outHeaders = { ...upRes.headers, "content-length": String(body.length) };
        delete outHeaders["transfer-encoding"];
        res.writeHead(upRes.statusCode ?? 502, outHeaders);
        if (fault === "resetMidBody") {
          res.write(body.subarray(0, Math.floor(body.length / 2)));
          return void setImmediate(() => req.socket.destroy());
        }
        res.end(body);
      });
      upRes.on("error", () => req.socket.destroy());
    });
    up.on("error", (err) => status(res, 502, "BadGateway", `fault proxy: ${err.message}`));
    req.pipe(up);
  }
}

function status(res: ServerResponse, code: number, reason: string, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(code, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code }));
}
