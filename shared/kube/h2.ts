/**
 * HTTP/2 to the API server, as client-go speaks it: one TLS connection per server carries every
 * request at once, so a function whose first event reads nine objects at once opens one connection,
 * not nine (each new TLS connection cost a cold process a few ms of JavaScript in a CPU profile). The
 * protocol is agreed in the TLS handshake (ALPN, h2 or http/1.1): a server that answers http/1.1
 * (a proxy, an API server with HTTP/2 turned off) is spoken to over HTTP/1.1 from then on.
 *
 * A request that gets no answer within its timeout fails, and the connection is asked whether it
 * is alive (an HTTP/2 PING, as client-go's health check does): a server slow on that one request
 * (under a burst, a Service create waits on its ClusterIP) answers, and the other requests on the
 * connection go on; a dead connection does not, and is closed, so the next request opens a new one.
 * A server that closes the connection (GOAWAY, a restart) is left at once; requests it refused are
 * failed as transient, never resent here.
 */
import type { ClientHttp2Session, IncomingHttpHeaders } from "node:http2";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import type { ConnectionOptions, TLSSocket } from "node:tls";

const load = createRequire(import.meta.url);

/** How long a connection suspected dead has to answer a PING. */
export const PING_TIMEOUT_MS = 5_000;

/** What an exchange answers: the status, the Retry-After header, the body as text. */
export interface Answer {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

/** One request as either transport sends it (HTTP/1.1 in ./client.ts, HTTP/2 here). */
export interface Outgoing {
  method: string;
  url: URL;
  headers: Record<string, string | number>;
  payload: string | undefined;
  timeoutMs: number;
  /** The timeout is the invocation's deadline, nearer than the request's own limit: reaching it is the deadline's doing. */
  byDeadline: boolean;
  signal: AbortSignal | undefined;
}

/** Why an exchange failed before a complete answer: the caller turns it into an ApiError. */
export class H2Failure extends Error {
  /** `refused`: the server reset the stream with REFUSED_STREAM, which says it did nothing with it (RFC 9113, 8.7). */
  readonly kind: "network" | "refused" | "timeout" | "aborted";
  constructor(kind: H2Failure["kind"], message: string) {
    super(message);
    this.kind = kind;
  }
}

/** The TLS settings of a connection: the CA, the client certificate, verification, SNI. */
export type TlsSettings = Pick<ConnectionOptions, "ca" | "cert" | "key" | "rejectUnauthorized" | "servername">;

export class H2Sessions {
  private readonly origin: URL;
  private readonly tls: TlsSettings;
  private current: Promise<ClientHttp2Session | undefined> | undefined;
  /** The server agreed on http/1.1: every request goes over HTTP/1.1 from now on. */
  private http1 = false;
  private readonly checking = new Set<ClientHttp2Session>();

  private readonly handshakeTimeoutMs: number;

  /** @param handshakeTimeoutMs a connection whose TLS handshake and HTTP/2 settings take longer fails (then the next request tries again) */
  constructor(origin: URL, tls: TlsSettings, handshakeTimeoutMs: number) {
    this.origin = origin;
    this.tls = tls;
    this.handshakeTimeoutMs = handshakeTimeoutMs;
  }

  /** The open session, a new one, or undefined when the server speaks HTTP/1.1 only. */
  session(): Promise<ClientHttp2Session | undefined> {
    if (this.http1) return Promise.resolve(undefined);
    this.current ??= this.open().catch((err: unknown) => {
      this.current = undefined;
      throw err;
    });
    return this.current;
  }

  private open(): Promise<ClientHttp2Session | undefined> {
    const tls = load("node:tls") as typeof import("node:tls");
    const http2 = load("node:http2") as typeof import("node:http2");
    const host = this.origin.hostname.replace(/^\[|\]$/g, "");
    return new Promise((resolve, reject) => {
      const socket: TLSSocket = tls.connect({
        ...this.tls,
        host,
        port: Number(this.origin.port || 443),
        ALPNProtocols: ["h2", "http/1.1"],
        ...(this.tls.servername === undefined && !isIP(host) ? { servername: host } : {}),
      });
      socket.once("error", reject);
      // Until the server's first SETTINGS: a server that accepts the connection and then says nothing fails it.
      socket.setTimeout(this.handshakeTimeoutMs, () =>
        socket.destroy(new Error(`no TLS handshake and HTTP/2 settings within ${this.handshakeTimeoutMs} ms`)),
      );
      socket.once("secureConnect", () => {
        socket.off("error", reject);
        if (socket.alpnProtocol !== "h2") {
          this.http1 = true;
          socket.destroy();
          return resolve(undefined);
        }
        const session = http2.connect(this.origin, { createConnection: () => socket });
        const forget = () => {
          if (this.current === opened) this.current = undefined;
        };
        session.on("error", forget);
        session.on("close", forget);
        session.on("goaway", () => (forget(), session.close()));
        const opened = Promise.resolve(session);
        // Requests sent before the server's first SETTINGS (sent at once) may exceed its limit of
        // concurrent streams (kube-apiserver allows 100 since CVE-2023-44487) and be refused; once
        // the limit is known, the streams beyond it wait in the session (nghttp2) for one to close.
        session.once("remoteSettings", () => {
          // Idle, it must not keep a process alive: each request holds its own timer. Not before:
          // while it opens, nothing else may hold a command-line process (the CLI) alive.
          session.unref();
          socket.setTimeout(0);
          this.current = opened;
          resolve(session);
        });
        // Before them: a failed opening (after them, rejecting does nothing).
        session.once("error", reject);
        session.once("close", () => reject(new Error("the connection closed before the server's settings")));
      });
    });
  }

  /**
   * `session` left a request unanswered: it is kept if it answers a PING within PING_TIMEOUT_MS,
   * and closed if not. One check at a time per session.
   */
  check(session: ClientHttp2Session): void {
    if (this.checking.has(session)) return;
    this.checking.add(session);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      this.checking.delete(session);
      if (!alive) this.drop(session);
    };
    const timer = setTimeout(() => done(false), PING_TIMEOUT_MS);
    try {
      if (!session.ping((err) => done(!err))) done(false);
    } catch {
      done(false); // the session closed meanwhile
    }
  }

  /** Closes the session `session` if it is still the current one: it is not to be trusted again. */
  drop(session: ClientHttp2Session): void {
    // A newer session still opening may fail: its own requests report that.
    void this.current?.then(
      (s) => {
        if (s !== session) return;
        this.current = undefined;
        // On the next turn: destroyed from a stream's callback while other streams' DATA is still
        // being read (a wave of writes), Node 22 aborts the process (nodejs/node#64850).
        setImmediate(() => session.destroy());
      },
      () => undefined,
    );
  }
}

/** One request over `session`: the whole answer, or an H2Failure. */
export function h2Exchange(sessions: H2Sessions, session: ClientHttp2Session, r: Outgoing): Promise<Answer> {
  const what = `${r.method} ${r.url.pathname}`;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      ":method": r.method,
      ":path": `${r.url.pathname}${r.url.search}`,
    };
    for (const [name, value] of Object.entries(r.headers)) headers[name.toLowerCase()] = value;
    let stream: ReturnType<ClientHttp2Session["request"]>;
    try {
      // Node ends a DELETE's stream at once unless told otherwise; a delete's preconditions are its body.
      stream = session.request(headers, { endStream: r.payload === undefined });
    } catch (err) {
      // The session closed between being handed out and this request (a GOAWAY meanwhile).
      sessions.drop(session);
      return reject(new H2Failure("network", `${what}: ${(err as Error).message}`));
    }
    const { constants } = load("node:http2") as typeof import("node:http2");
    let response: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    const settle = (f: () => void) => {
      clearTimeout(timer);
      r.signal?.removeEventListener("abort", onAbort);
      f();
    };
    const fail = (kind: H2Failure["kind"], message: string) => {
      settle(() => reject(new H2Failure(kind, message)));
      if (!stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
    };
    const timer = setTimeout(
      () => fail("timeout", `${what}: no complete answer within ${r.timeoutMs} ms`),
      r.timeoutMs,
    );
    const onAbort = () => fail("aborted", what);
    r.signal?.addEventListener("abort", onAbort);
    stream.on("response", (h) => (response = h));
    stream.on("data", (c: Buffer) => chunks.push(c));
    const reset = () => (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? "refused" : "network");
    stream.on("error", (err: Error) => fail(reset(), `${what}: ${err.message}`));
    stream.on("end", () =>
      settle(() => {
        if (!response) return reject(new H2Failure("network", `${what}: the stream ended without a response`));
        const retryAfter: string | string[] | undefined = response["retry-after"];
        resolve({
          status: Number(response[":status"] ?? 0),
          retryAfter: typeof retryAfter === "string" ? retryAfter : retryAfter?.[0],
          text: Buffer.concat(chunks).toString("utf8"),
        });
      }),
    );
    // A reset or a closed session ends the stream without 'end'.
    stream.on("close", () =>
      fail(reset(), `${what}: the stream closed before the response was complete (code ${stream.rstCode})`),
    );
    stream.end(r.payload);
  });
}
