/**
 * The alternatives to shared/kube's transport and credential loaders that bench/kube-client.ts
 * measures, each a `connect` with the product's signature, so that KubeClient (paths, Tables,
 * server-side apply, errors, deadlines, throttling) stays the same and only the part measured
 * changes:
 *
 *   ours                  shared/kube as it is: our loader (./credentials.ts), HTTP/2 sessions (./h2.ts)
 *   undici                our loader; undici's Agent with `allowH2: true` (its ProxyAgent through a proxy)
 *   client-node           client-node's KubeConfig (loadFromFile/loadFromDefault, applyToHTTPSOptions); our HTTP/2 sessions
 *   client-node + undici  both libraries: KubeConfig's credentials over undici
 *
 * A harness, not a switch of the product: the bench bundles a function with `shared/kube/client.ts`
 * resolved to ./kube-client-<variant>.ts, which re-exports the product's client with this `connect`.
 * Over undici, KubeClient's private `send` is replaced for connections that carry a `dispatcher`
 * (installUndiciSend): the same time limit, deadline, counts and ApiErrors as the product's.
 */
import type { RequestOptions as HttpsRequestOptions } from "node:https";
import type { Dispatcher } from "undici";
import {
  KubeClient,
  REQUEST_TIMEOUT_MS,
  envProxyAgent,
  retryAfter,
  type Connection,
  type KubeClientOptions,
} from "../../shared/kube/client.ts";
import { simpleCredentials } from "../../shared/kube/credentials.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { H2Sessions, type TlsSettings } from "../../shared/kube/h2.ts";

/** A connection over undici (./kube-undici.ts): its dispatcher, and the headers of each request. */
export interface UndiciConnection extends Connection {
  dispatcher: Dispatcher;
  headers: () => Promise<Record<string, string>>;
}

export type Env = Record<string, string | undefined>;

/** Credentials, whoever loaded them: the server, the TLS settings, and the headers of each request. */
export interface Loaded {
  server: string;
  tls: TlsSettings;
  headers: () => Promise<Record<string, string>>;
  /** A proxy the kubeconfig names (`proxy-url`); client-node's agent for it. */
  proxyAgent?: HttpsRequestOptions["agent"];
}

/** Our loader (shared/kube/credentials.ts); undefined where the product would fall back to client-node. */
export async function oursLoaded(kubeconfig: string | undefined): Promise<Loaded | undefined> {
  const c = await simpleCredentials(kubeconfig, process.env);
  if (!c) return undefined;
  const tls: TlsSettings = {
    ...(c.ca ? { ca: c.ca } : {}),
    ...(c.cert ? { cert: c.cert } : {}),
    ...(c.key ? { key: c.key } : {}),
    ...(c.skipTLSVerify ? { rejectUnauthorized: false } : {}),
    ...(c.servername ? { servername: c.servername } : {}),
  };
  return {
    server: c.server,
    tls,
    headers: (): Promise<Record<string, string>> =>
      Promise.resolve<Record<string, string>>(c.token ? { Authorization: `Bearer ${c.token()}` } : {}),
  };
}

/** Our transport (HTTP/2 sessions to an https server reached directly, else HTTP/1.1 over an agent) with any loader. */
export async function ourTransport(l: Loaded, env: Env): Promise<Connection> {
  const server = new URL(l.server);
  const agent = l.proxyAgent ? undefined : await envProxyAgent(server, env);
  const http2 =
    server.protocol === "https:" && !agent && !l.proxyAgent
      ? new H2Sessions(server, l.tls, REQUEST_TIMEOUT_MS)
      : undefined;
  return {
    server: l.server,
    ...(agent ? { agent } : {}),
    ...(http2 ? { http2 } : {}),
    httpsOptions: async () => ({
      ...l.tls,
      ...(l.proxyAgent ? { agent: l.proxyAgent } : {}),
      headers: await l.headers(),
    }),
  };
}

function deadlineExceeded(what: string, when: "unsent" | "cut"): ApiError {
  return new ApiError(
    0,
    "DeadlineExceeded",
    `${what}: ${when === "cut" ? "cut off" : "not sent"}, the invocation's deadline has passed`,
  );
}

/** What KubeClient keeps private, as the replacement `send` reads it. */
interface Internals {
  connection: Connection;
  options: KubeClientOptions;
  stats: { reads: number; writes: number };
  remaining(): number;
}

let installed = false;

/**
 * Replaces KubeClient's `send` for connections over undici: one request with the product's time
 * limit (the whole exchange), the invocation's deadline and signal, counts, and ApiErrors.
 */
export function installUndiciSend(): void {
  if (installed) return;
  installed = true;
  const proto = KubeClient.prototype as unknown as {
    send: (this: Internals, ...a: [string, string, unknown, string, string]) => Promise<unknown>;
  };
  const ours = proto.send;
  proto.send = async function (this: Internals, method, path, body, contentType, accept) {
    const connection = this.connection as Partial<UndiciConnection>;
    if (!connection.dispatcher) return ours.call(this, method, path, body, contentType, accept);
    const url = new URL(path, connection.server);
    const what = `${method} ${url.pathname}`;
    const auth = await connection.headers!();
    const remaining = this.remaining();
    const timeout = Math.min(REQUEST_TIMEOUT_MS, remaining);
    const signal = this.options.signal;
    if (signal?.aborted || timeout <= 0) throw deadlineExceeded(what, "unsent");
    if (method === "GET") this.stats.reads++;
    else this.stats.writes++;
    const payload = JSON.stringify(body) as string | undefined;
    const headers: Record<string, string> = {
      ...auth,
      accept,
      ...(payload === undefined ? {} : { "content-type": contentType }),
      ...(this.options.impersonate ? { "impersonate-user": this.options.impersonate } : {}),
    };
    const cut = new AbortController();
    const timer = setTimeout(
      () =>
        cut.abort(
          timeout < REQUEST_TIMEOUT_MS
            ? deadlineExceeded(what, "cut")
            : new ApiError(0, "Timeout", `${what}: no complete answer within ${timeout} ms`),
        ),
      timeout,
    );
    const onAbort = () => cut.abort(deadlineExceeded(what, "cut"));
    signal?.addEventListener("abort", onAbort);
    let status: number;
    let text: string;
    let header: string | string[] | undefined;
    try {
      const res = await connection.dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: method,
        headers,
        body: payload ?? null,
        signal: cut.signal,
      });
      status = res.statusCode;
      header = res.headers["retry-after"];
      text = await res.body.text();
    } catch (err) {
      if (cut.signal.aborted && cut.signal.reason instanceof ApiError) throw cut.signal.reason;
      const e = err as Error & { cause?: Error };
      throw new ApiError(0, "NetworkError", `${what}: ${e.cause?.message ?? e.message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Non-JSON bodies are passed on as text, as the product's.
    }
    if (status >= 200 && status < 300) return parsed;
    const st = (parsed ?? {}) as { reason?: string; message?: string };
    throw new ApiError(
      status,
      st.reason ?? "Unknown",
      `${what}: ${status} ${st.message ?? text}`,
      retryAfter(status, Array.isArray(header) ? header[0] : header),
    );
  };
}
