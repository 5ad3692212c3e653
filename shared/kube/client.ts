/**
 * The one Kubernetes adapter: every read and write the product makes goes through here, counted,
 * with server-side apply, UID-preconditioned deletes and optimistic-concurrency status writes.
 * It speaks HTTP itself (HTTP/2 where the server agrees, ./h2.ts; else node:http/https) so it
 * controls content types, preconditions, deadlines and connections; @kubernetes/client-node is
 * used only to load credentials our loader (./credentials.ts) does not, when first needed.
 */
import type { Agent } from "node:http";
import type { ClientHttp2Session } from "node:http2";
import type { RequestOptions as HttpsRequestOptions } from "node:https";
import { http, https } from "../node-http.ts";
import { simpleCredentials, type SimpleCredentials } from "./credentials.ts";
import { ApiError } from "./errors.ts";
import { FirstExchange, untilReadyOrAborted } from "./first-exchange.ts";
import { H2Failure, H2Sessions, h2Exchange, type Answer, type Outgoing } from "./h2.ts";
import { proxyFromEnv } from "./proxy-env.ts";
import { collectionPath, knownResource, objectPath, splitApiVersion, type Resource } from "./resources.ts";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; [key: string]: unknown };
  [field: string]: unknown;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

export interface Connection {
  /** https:// or http:// (`kubectl proxy`). */
  server: string;
  /** TLS material and auth headers, refreshed before each request (exec credentials expire). */
  httpsOptions: () => Promise<HttpsRequestOptions>;
  /** Carries the connections: keep-alive, or a proxy's (the kubeconfig's `proxy-url`, HTTPS_PROXY). */
  agent?: Agent;
  /** HTTP/2 to an https server reached directly (./h2.ts); without it, HTTP/1.1 over `agent`. */
  http2?: H2Sessions;
}

export interface RequestStats {
  reads: number;
  writes: number;
}

/** Time as the client sees it; tests give it their own. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      // `done` removes itself from the signal, whichever comes first.
      const done = () => (clearTimeout(timer), signal?.removeEventListener("abort", done), resolve());
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done);
    }),
};

/** One read's whole time, headers and body: above any answer a healthy API server gives. */
export const REQUEST_TIMEOUT_MS = 10_000;
/**
 * A write's: a healthy but busy API server can take longer on one (in a burst, a Service create
 * waits for its ClusterIP: over 10 s for 80 of 200 pairs at once), and one sent again would only
 * add to it. The API server's own limit is 60 s; an invocation's deadline cuts it sooner.
 */
export const WRITE_TIMEOUT_MS = 30_000;
/** Throttled requests are tried this often in all, each after the server's Retry-After. */
const THROTTLE_ATTEMPTS = 3;
/** A longer Retry-After is not waited out even without a deadline: the caller's retry is better placed. */
const MAX_RETRY_AFTER_MS = 30_000;
/** A collection as a meta.k8s.io/v1 Table, as kubectl get asks for it. */
export const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io";

const agents = {
  "https:": new https.Agent({ keepAlive: true, maxSockets: 16 }),
  "http:": new http.Agent({ keepAlive: true, maxSockets: 16 }),
};
const firstExchange = new FirstExchange();

/**
 * Loads credentials from a kubeconfig file, or from the default chain (KUBECONFIG, ~/.kube/config,
 * in-cluster; read from process.env, as client-node does). `env` holds the proxy settings.
 */
export async function connect(
  kubeconfig?: string,
  env: Record<string, string | undefined> = process.env,
): Promise<Connection> {
  const simple = await simpleCredentials(kubeconfig, process.env);
  return simple ? simpleConnection(simple, env) : clientNodeConnection(kubeconfig, env);
}

/** A connection from credentials read without client-node (./credentials.ts). */
export async function simpleConnection(
  c: SimpleCredentials,
  env: Record<string, string | undefined>,
): Promise<Connection> {
  const agent = await envProxyAgent(new URL(c.server), env);
  const tls: HttpsRequestOptions = {
    ...(c.ca ? { ca: c.ca } : {}),
    ...(c.cert ? { cert: c.cert } : {}),
    ...(c.key ? { key: c.key } : {}),
    ...(c.skipTLSVerify ? { rejectUnauthorized: false } : {}),
    ...(c.servername ? { servername: c.servername } : {}),
  };
  const server = new URL(c.server);
  // Through a proxy, HTTP/1.1: the tunnel is the proxy agent's.
  const http2 = server.protocol === "https:" && !agent ? new H2Sessions(server, tls, REQUEST_TIMEOUT_MS) : undefined;
  return {
    server: c.server,
    ...(agent ? { agent } : {}),
    ...(http2 ? { http2 } : {}),
    httpsOptions: () => Promise.resolve({ ...tls, headers: c.token ? { Authorization: `Bearer ${c.token()}` } : {} }),
  };
}

/** A connection whose credentials client-node loads: exec plugins, auth providers, proxy-url and the rest. */
export async function clientNodeConnection(
  kubeconfig: string | undefined,
  env: Record<string, string | undefined>,
): Promise<Connection> {
  // The config module alone: the package index would also load every generated API client.
  const { KubeConfig } = await import("@kubernetes/client-node/dist/config.js");
  let kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no current cluster in ${kubeconfig ?? "the default kubeconfig"}`);
  const server = new URL(cluster.server);
  if (server.protocol === "http:") {
    // client-node refuses plain HTTP unless TLS verification is off; there is no TLS to verify.
    const plain = new KubeConfig();
    plain.loadFromClusterAndUser({ ...cluster, skipTLSVerify: true }, kc.getCurrentUser() ?? { name: "anonymous" });
    kc = plain;
  }
  const agent = cluster.proxyUrl ? undefined : await envProxyAgent(server, env);
  return {
    server: cluster.server,
    ...(agent ? { agent } : {}),
    httpsOptions: async () => {
      const opts: HttpsRequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      // The kubeconfig's proxy-url comes as client-node's proxy agent; otherwise ours keeps connections alive.
      if (!cluster.proxyUrl) delete opts.agent;
      return opts;
    },
  };
}

/** The agent that tunnels to `server` through HTTP_PROXY/HTTPS_PROXY, unless NO_PROXY exempts it. */
export async function envProxyAgent(server: URL, env: Record<string, string | undefined>): Promise<Agent | undefined> {
  const proxy = proxyFromEnv(server, env);
  if (!proxy) return undefined;
  const { HttpsProxyAgent, HttpProxyAgent } = await import("hpagent");
  const options = { keepAlive: true, maxSockets: 16, proxy };
  return server.protocol === "https:" ? new HttpsProxyAgent(options) : new HttpProxyAgent(options);
}

interface Exchange {
  base: HttpsRequestOptions;
  method: string;
  url: URL;
  body: unknown;
  contentType: string;
  accept: string;
}

/** How an exchange travels: HTTP/2 over an open session, or HTTP/1.1 over an agent's connections. */
type Carrier =
  | { h2: H2Sessions; session: ClientHttp2Session }
  | { lib: typeof http | typeof https; agent: Agent | boolean | undefined; onSession?: (() => void) | undefined };

export interface KubeClientOptions {
  /** Act as this user (e.g. `system:serviceaccount:ns:name`); the caller must be allowed to impersonate. */
  impersonate?: string;
  /** Aborts every request in flight and refuses new ones: the invocation's deadline has passed. */
  signal?: AbortSignal;
  /** When the invocation's deadline passes, on `clock`: a throttled request waits only if it can finish before it. */
  deadline?: number;
  clock?: Clock;
}

export class KubeClient {
  readonly stats: RequestStats = { reads: 0, writes: 0 };
  private readonly discovered = new Map<string, Resource>();
  private readonly connection: Connection;
  private readonly options: KubeClientOptions;

  constructor(connection: Connection, options: KubeClientOptions = {}) {
    this.connection = connection;
    this.options = options;
  }

  /** A client with the same credentials acting as another user. */
  as(user: string): KubeClient {
    return new KubeClient(this.connection, { ...this.options, impersonate: user });
  }

  /** The same client with its own request counts and, for one invocation, its deadline. */
  fork(invocation: Pick<KubeClientOptions, "signal" | "deadline" | "clock"> = {}): KubeClient {
    return new KubeClient(this.connection, { ...this.options, ...invocation });
  }

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private remaining(): number {
    return this.options.deadline === undefined ? Infinity : this.options.deadline - this.clock.now();
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
    accept = "application/json",
  ): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.send(method, path, body, contentType, accept);
      } catch (err) {
        const wait =
          err instanceof ApiError && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : undefined;
        // Wait out throttling only when the retry can still finish in time; otherwise the caller answers 503 with Retry-After.
        if (
          wait === undefined ||
          attempt >= THROTTLE_ATTEMPTS ||
          wait > MAX_RETRY_AFTER_MS ||
          wait + REQUEST_TIMEOUT_MS / 10 >= this.remaining()
        )
          throw err;
        await this.clock.sleep(wait, this.options.signal);
      }
    }
  }

  /** The module for the URL's scheme, and the agent: the kubeconfig's proxy agent, an env proxy's, or keep-alive. */
  private transport(
    url: URL,
    base: HttpsRequestOptions,
  ): { lib: typeof http | typeof https; agent: Agent | boolean | undefined } {
    const plain = url.protocol === "http:";
    return {
      lib: plain ? http : https,
      agent: base.agent ?? this.connection.agent ?? agents[plain ? "http:" : "https:"],
    };
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    accept: string,
  ): Promise<unknown> {
    const url = new URL(path, this.connection.server);
    const base = await this.connection.httpsOptions();
    const exchange = { base, method, url, body, contentType, accept };
    const h2 = url.protocol === "https:" ? this.connection.http2 : undefined;
    const session = h2 && (await this.h2Session(h2, `${method} ${url.pathname}`));
    if (h2 && session) return this.exchange(exchange, { h2, session });
    const { lib, agent } = this.transport(url, base);
    const gate =
      url.protocol === "https:" && typeof agent === "object" ? firstExchange.enter(agent, url.origin) : undefined;
    try {
      if (gate) await untilReadyOrAborted(gate.ready, this.options.signal);
      return await this.exchange(exchange, { lib, agent, onSession: gate?.done });
    } finally {
      gate?.done?.();
    }
  }

  /** The HTTP/2 session to send over (opened if none is), or undefined when the server speaks HTTP/1.1 only; within the deadline. */
  private async h2Session(h2: H2Sessions, what: string): Promise<ClientHttp2Session | undefined> {
    const signal = this.options.signal;
    if (signal?.aborted || this.remaining() <= 0) throw deadlineExceeded(what, "unsent");
    let stop = () => {};
    const deadline = new Promise<never>((_, reject) => {
      const onAbort = () => reject(deadlineExceeded(what, "unsent"));
      const timer = Number.isFinite(this.remaining()) ? setTimeout(onAbort, this.remaining()) : undefined;
      signal?.addEventListener("abort", onAbort);
      stop = () => (clearTimeout(timer), signal?.removeEventListener("abort", onAbort));
    });
    try {
      return await Promise.race([
        h2.session().catch((err: unknown) => Promise.reject(networkError(what, (err as Error).message))),
        deadline,
      ]);
    } finally {
      stop();
    }
  }

  private async exchange(r: Exchange, carrier: Carrier): Promise<unknown> {
    const { base, method, url, body, contentType, accept } = r;
    const what = `${method} ${url.pathname}`;
    // After the credentials (which can take long: exec plugins) and the first exchange's wait: the deadline may have passed meanwhile.
    const limit = method === "GET" ? REQUEST_TIMEOUT_MS : WRITE_TIMEOUT_MS;
    const timeout = Math.min(limit, this.remaining());
    if (this.options.signal?.aborted || timeout <= 0) throw deadlineExceeded(what, "unsent");
    if (method === "GET") this.stats.reads++;
    else this.stats.writes++;
    // No body, no payload: JSON.stringify(undefined) is undefined.
    const payload = JSON.stringify(body) as string | undefined;
    const headers: Record<string, string | number> = {
      ...(base.headers as Record<string, string>),
      Accept: accept,
      ...(payload === undefined ? {} : { "Content-Type": contentType, "Content-Length": Buffer.byteLength(payload) }),
      ...(this.options.impersonate ? { "Impersonate-User": this.options.impersonate } : {}),
    };
    const signal = this.options.signal;
    const out = { method, url, headers, payload, signal, timeoutMs: timeout, byDeadline: timeout < limit };
    const answer = "h2" in carrier ? await overH2(carrier, out, what) : await overH1(carrier, { ...out, base }, what);
    let parsed: unknown = answer.text;
    try {
      parsed = answer.text === "" ? undefined : JSON.parse(answer.text);
    } catch {
      // Non-JSON bodies (proxies, health endpoints) are passed on as text.
    }
    if (answer.status >= 200 && answer.status < 300) return parsed;
    const st = (parsed ?? {}) as { reason?: string; message?: string };
    throw new ApiError(
      answer.status,
      st.reason ?? "Unknown",
      `${what}: ${answer.status} ${st.message ?? answer.text}`,
      retryAfter(answer.status, answer.retryAfter),
    );
  }

  async resource(apiVersion: string, kind: string): Promise<Resource> {
    const known = knownResource(apiVersion, kind);
    if (known) return known;
    const key = `${apiVersion}/${kind}`;
    const cached = this.discovered.get(key);
    if (cached) return cached;
    const { group, version } = splitApiVersion(apiVersion);
    const list = (await this.request("GET", group === "" ? `/api/${version}` : `/apis/${group}/${version}`)) as {
      resources: { name: string; kind: string; namespaced: boolean }[];
    };
    const found = list.resources.find((r) => r.kind === kind && !r.name.includes("/"));
    if (!found) throw new ApiError(404, "NotFound", `the API server does not serve kind ${kind} in ${apiVersion}`);
    const r = { group, version, plural: found.name, namespaced: found.namespaced };
    this.discovered.set(key, r);
    return r;
  }

  private async path(ref: ObjectRef): Promise<string> {
    return objectPath(await this.resource(ref.apiVersion, ref.kind), ref.namespace, ref.name);
  }

  /**
   * Opens a connection to the API server before any request needs one: a GET of /version, which
   * the default RBAC policy lets every user read. A cold process calls it once it listens, so the
   * TLS set-up (OpenSSL's first context, the full handshake, the session ticket) is done while it
   * waits for its first event, and that event's first read finds the connection open. Never
   * fails: the first event's own requests report whatever is wrong.
   */
  async preconnect(): Promise<void> {
    await this.request("GET", "/version").catch(() => undefined);
  }

  /** The object, or undefined when it does not exist. */
  async get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return (await this.request("GET", await this.path(ref))) as T;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  async list<T = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector?: string,
  ): Promise<T[]> {
    const r = await this.resource(apiVersion, kind);
    const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
    const list = (await this.request("GET", `${collectionPath(r, namespace)}${query}`)) as { items?: T[] };
    return list.items ?? [];
  }

  /**
   * Every object of a kind in all namespaces, in pages of `limit`, with the resourceVersion of the
   * list (one consistent snapshot across the pages), which a watch resumes from.
   */
  async listAll<T = KubeObject>(
    apiVersion: string,
    kind: string,
    labelSelector: string | undefined,
    limit = 500,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let resourceVersion = "";
    for await (const page of this.listPages<T>(apiVersion, kind, labelSelector, limit)) {
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
    }
    return { items, resourceVersion };
  }

  /**
   * The same list, a page at a time: one page is held at once, however many objects there are.
   * Every page carries the list's resourceVersion (the last page's is the one a watch resumes from).
   */
  async *listPages<T = KubeObject>(
    apiVersion: string,
    kind: string,
    labelSelector: string | undefined,
    limit = 500,
  ): AsyncGenerator<{ items: T[]; resourceVersion: string }> {
    const r = await this.resource(apiVersion, kind);
    let token: string | undefined;
    let resourceVersion = "";
    do {
      const query = new URLSearchParams({
        limit: String(limit),
        ...(labelSelector ? { labelSelector } : {}),
        ...(token ? { continue: token } : {}),
      });
      const page = (await this.request("GET", `${collectionPath(r, undefined)}?${query.toString()}`)) as {
        items?: T[];
        metadata?: { continue?: string; resourceVersion?: string };
      };
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      token = page.metadata?.continue || undefined;
      yield { items: page.items ?? [], resourceVersion };
    } while (token);
  }

  /**
   * Lists in pages of `limit` (the API server's `continue` token), so a large collection is never
   * one response held in memory at once, and as a Table without the objects (`includeObject=None`):
   * each row carries only the cells of the kind's printer columns, not the object with its
   * managedFields. A 410 on a continue token means the list grew stale.
   */
  async *listTablePages<T = unknown>(apiVersion: string, kind: string, limit: number): AsyncGenerator<T> {
    const r = await this.resource(apiVersion, kind);
    let token: string | undefined;
    do {
      const query = new URLSearchParams({
        limit: String(limit),
        includeObject: "None",
        ...(token ? { continue: token } : {}),
      });
      const page = (await this.request(
        "GET",
        `${collectionPath(r, undefined)}?${query.toString()}`,
        undefined,
        undefined,
        TABLE,
      )) as { metadata?: { continue?: string } };
      yield page as Awaited<T>;
      token = page.metadata?.continue || undefined;
    } while (token);
  }

  /**
   * Lists, then streams watch events from the list's resourceVersion until `signal` aborts or the
   * watch ends (the API server closes watches after a timeout; 410 Gone means the version expired).
   * Resolves with the last resourceVersion seen, to resume from.
   */
  async listAndWatch<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    labelSelector: string | undefined,
    onEvent: (type: "ADDED" | "MODIFIED" | "DELETED", obj: T) => void,
    signal: AbortSignal,
    resumeFrom?: string,
    onWatching?: () => void,
    scope: { namespace?: string; fieldSelector?: string } = {},
  ): Promise<string | undefined> {
    const r = await this.resource(apiVersion, kind);
    const base = collectionPath(r, scope.namespace);
    const selectors = {
      ...(labelSelector ? { labelSelector } : {}),
      ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}),
    };
    let resourceVersion = resumeFrom;
    if (resourceVersion === undefined) {
      const query = new URLSearchParams(selectors);
      const list = (await this.request("GET", `${base}?${query.toString()}`)) as {
        metadata: { resourceVersion: string };
      };
      resourceVersion = list.metadata.resourceVersion;
    }
    const query = new URLSearchParams({ watch: "true", allowWatchBookmarks: "true", resourceVersion, ...selectors });
    const url = new URL(`${base}?${query.toString()}`, this.connection.server);
    const opts = await this.connection.httpsOptions();
    // An abort that came while listing would find no watch to close: open none.
    if (signal.aborted) return resourceVersion;
    this.stats.reads++;
    return new Promise((resolve, reject) => {
      const { lib, agent } = this.transport(url, opts);
      const req = lib.request(
        url,
        {
          ...opts,
          agent,
          method: "GET",
          headers: { ...(opts.headers as Record<string, string>), Accept: "application/json" },
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new ApiError(res.statusCode ?? 0, "WatchFailed", `watch ${url.pathname}: ${res.statusCode}`));
          }
          onWatching?.();
          let buffer = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            buffer += chunk;
            let nl;
            while ((nl = buffer.indexOf("\n")) >= 0) {
              const line = buffer.slice(0, nl);
              buffer = buffer.slice(nl + 1);
              if (!line.trim()) continue;
              const event = JSON.parse(line) as { type: string; object: T & { code?: number; message?: string } };
              if (event.type === "ERROR") {
                req.destroy();
                return reject(
                  new ApiError(
                    event.object.code ?? 500,
                    "WatchError",
                    `watch ${url.pathname}: ${event.object.message}`,
                  ),
                );
              }
              resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
              if (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED") {
                onEvent(event.type, { ...event.object, apiVersion, kind });
              }
            }
          });
          res.on("end", () => resolve(resourceVersion));
          // A stream cut without an end (the connection reset) ends the watch too: resume from here.
          res.on("close", () => resolve(resourceVersion));
          res.on("error", reject);
        },
      );
      signal.addEventListener(
        "abort",
        () => {
          req.destroy();
          resolve(resourceVersion);
        },
        { once: true },
      );
      req.on("error", (err) => (signal.aborted ? resolve(resourceVersion) : reject(err)));
      req.end();
    });
  }

  /** Server-side apply. `force` takes fields other managers own; use it only where that is the documented intent. */
  async apply<T = KubeObject>(
    obj: KubeObject,
    fieldManager: string,
    options: { force?: boolean; dryRun?: boolean } = {},
  ): Promise<T> {
    const query = new URLSearchParams({
      fieldManager,
      ...(options.force ? { force: "true" } : {}),
      ...(options.dryRun ? { dryRun: "All" } : {}),
    });
    const path = await this.path({ ...obj, namespace: obj.metadata.namespace, name: obj.metadata.name });
    return (await this.request("PATCH", `${path}?${query.toString()}`, obj, "application/apply-patch+yaml")) as T;
  }

  /** Creates an object; a name already taken is a 409 (AlreadyExists), never an overwrite. */
  async create<T = KubeObject>(obj: KubeObject): Promise<T> {
    const r = await this.resource(obj.apiVersion, obj.kind);
    return (await this.request("POST", collectionPath(r, obj.metadata.namespace), obj)) as T;
  }

  /** Deletes only the object with this UID; "gone" when it no longer exists. */
  async deleteExact(ref: ObjectRef, uid: string): Promise<"deleted" | "gone"> {
    const body = { kind: "DeleteOptions", apiVersion: "v1", preconditions: { uid }, propagationPolicy: "Background" };
    try {
      await this.request("DELETE", await this.path(ref), body);
      return "deleted";
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return "gone";
      throw err;
    }
  }

  /** Replaces the status subresource; the object's resourceVersion makes a stale write fail with 409. */
  /** Replaces an object, over the resourceVersion it names: a 409 when it changed since. */
  async replace<T = KubeObject>(obj: KubeObject): Promise<T> {
    const path = await this.path({ ...obj, namespace: obj.metadata.namespace, name: obj.metadata.name });
    return (await this.request("PUT", path, obj)) as T;
  }

  async replaceStatus<T = KubeObject>(obj: KubeObject): Promise<T> {
    const path = await this.path({ ...obj, namespace: obj.metadata.namespace, name: obj.metadata.name });
    return (await this.request("PUT", `${path}/status`, obj)) as T;
  }
}

/** One exchange over HTTP/1.1: the whole answer, or an ApiError for a network failure, the timeout or the deadline. */
function overH1(
  { lib, agent, onSession }: Extract<Carrier, { lib: unknown }>,
  {
    base,
    method,
    url,
    headers,
    payload,
    timeoutMs: timeout,
    byDeadline,
    signal,
  }: Outgoing & { base: HttpsRequestOptions },
  what: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // The first outcome wins: a promise settles once, and the cleanup can run again harmlessly.
    const settle = (f: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      f();
    };
    const fail = (err: ApiError) => {
      settle(() => reject(err));
      req.destroy();
    };
    const req = lib.request(url, { ...base, agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", (err) => fail(networkError(what, err.message)));
      // A reset mid-body ends the response without 'end' (and, on some Node versions, without 'error').
      res.on("close", () => {
        if (!res.complete) fail(networkError(what, "the connection closed before the response was complete"));
      });
      res.on("end", () =>
        settle(() =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers["retry-after"],
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        ),
      );
    });
    // The agent caches the session on the same event, before this listener runs.
    if (onSession) req.once("socket", (socket) => socket.once("session", onSession));
    // The whole exchange, not only idle time: a slow-drip body must not outlive the deadline.
    const timer = setTimeout(
      () =>
        fail(
          byDeadline
            ? deadlineExceeded(what, "cut")
            : new ApiError(0, "Timeout", `${what}: no complete answer within ${timeout} ms`),
        ),
      timeout,
    );
    const onAbort = () => fail(deadlineExceeded(what, "cut"));
    // settle() removes it.
    signal?.addEventListener("abort", onAbort);
    req.on("error", (err) => fail(err instanceof ApiError ? err : networkError(what, err.message)));
    req.end(payload);
  });
}

/** One exchange over HTTP/2, its failures as the HTTP/1.1 ones are reported. */
async function overH2(
  { h2, session }: Extract<Carrier, { h2: unknown }>,
  out: Outgoing,
  what: string,
): Promise<Answer> {
  try {
    return await h2Exchange(h2, session, out);
  } catch (err) {
    if (!(err instanceof H2Failure)) throw err;
    if (err.kind === "aborted" || (err.kind === "timeout" && out.byDeadline)) throw deadlineExceeded(what, "cut");
    // Not the deadline: the connection may be dead; a PING tells (dead, the next request opens a new one).
    if (err.kind === "timeout") throw (h2.check(session), new ApiError(0, "Timeout", err.message));
    // Never processed, so safe to send again whatever the method: at once, as a throttled request is.
    if (err.kind === "refused") throw new ApiError(0, "RefusedStream", err.message, 0);
    throw new ApiError(0, "NetworkError", err.message);
  }
}

function deadlineExceeded(what: string, when: "unsent" | "cut"): ApiError {
  return new ApiError(
    0,
    "DeadlineExceeded",
    `${what}: ${when === "cut" ? "cut off" : "not sent"}, the invocation's deadline has passed`,
  );
}

function networkError(what: string, message: string): ApiError {
  return new ApiError(0, "NetworkError", `${what}: ${message}`);
}

/** Seconds to wait before retrying a throttled (429) or unavailable (503) answer, when the server said. */
export function retryAfter(status: number, header: string | undefined): number | undefined {
  if ((status !== 429 && status !== 503) || header === undefined || !/^\d+$/.test(header.trim())) return undefined;
  // Number() ignores the surrounding whitespace trim() removes.
  return Number(header);
}
