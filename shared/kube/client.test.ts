// The adapter against real sockets on loopback: resets, slow bodies, deadlines, throttling, plain
// HTTP servers and proxies, which a mocked transport cannot reproduce.
import { getEventListeners } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import { connect as connectSocket, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KubeClient, connect, systemClock, type Clock } from "./client.ts";
import { ApiError } from "./errors.ts";
import { plain, rejectedWith } from "../../test/kube-support.ts";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => (s.closeAllConnections(), new Promise((r) => s.close(r)))));
});

/** A loopback server; `seen` records each request's method and URL as the server got it. */
async function serve(handler: http.RequestListener): Promise<{ url: string; port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, seen };
}

/** A clock that stands still and records the sleeps asked of it. */
function stillClock(): Clock & { slept: number[] } {
  const slept: number[] = [];
  return { slept, now: () => 0, sleep: async (ms) => void slept.push(ms) };
}

const failure = (p: Promise<unknown>) => rejectedWith(p, ApiError);

describe("a request always settles", () => {
  it("fails with a network error when the connection is reset mid-body", async () => {
    const api = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"kind":"Con');
      setImmediate(() => res.socket?.destroy());
    });
    const err = await failure(new KubeClient(plain(api.url)).request("GET", "/api/v1/namespaces/a/configmaps/b"));
    expect(err.reason).toBe("NetworkError");
    // Node (>= 22, the engines' floor) reports the reset on the response as "aborted".
    expect(err.message).toBe("GET /api/v1/namespaces/a/configmaps/b: aborted");
    expect(err.transient).toBe(true);
  });

  it("gives up on a slow-drip body when the invocation's deadline comes, whatever the idle time", async () => {
    let drips = 0;
    const api = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const t = setInterval(() => (drips++, res.write(" ")), 5);
      res.on("close", () => clearInterval(t));
    });
    const kube = new KubeClient(plain(api.url), { deadline: 150, clock: stillClock() });
    const err = await failure(kube.request("GET", "/api/v1/namespaces"));
    expect(drips).toBeGreaterThan(0);
    expect(err.reason).toBe("DeadlineExceeded");
    expect(err.message).toBe("GET /api/v1/namespaces: cut off, the invocation's deadline has passed");
    expect(err.transient).toBe(true);
  });

  it("cuts the request in flight when the invocation is aborted, closes its connection, and sends no other", async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((r) => (closed = r));
    const api = await serve((req) => {
      // Never answers.
      req.socket.on("close", closed);
    });
    const deadline = new AbortController();
    const kube = new KubeClient(plain(api.url), { signal: deadline.signal });
    const pending = kube.request("GET", "/api/v1/namespaces/a/services/b");
    await new Promise<void>((r) => setImmediate(r));
    while (api.seen.length === 0) await new Promise<void>((r) => setTimeout(r, 1));
    deadline.abort();
    expect((await failure(pending)).reason).toBe("DeadlineExceeded");
    expect((await failure(kube.request("PATCH", "/api/v1/namespaces/a/services/b", {}))).reason).toBe(
      "DeadlineExceeded",
    );
    expect(api.seen).toEqual(["GET /api/v1/namespaces/a/services/b"]);
    expect(kube.stats).toEqual({ reads: 1, writes: 0 });
    await connectionClosed;
  });

  it("sends nothing when the deadline passes while credentials are being fetched (a slow exec plugin)", async () => {
    const api = await serve((_req, res) => res.end("{}"));
    const deadline = new AbortController();
    const slowCredentials = { server: api.url, httpsOptions: async () => (deadline.abort(), {}) };
    const kube = new KubeClient(slowCredentials, { signal: deadline.signal });
    expect((await failure(kube.request("PATCH", "/api/v1/namespaces/a/configmaps/b", {}))).reason).toBe(
      "DeadlineExceeded",
    );
    expect(api.seen).toEqual([]);
    expect(kube.stats).toEqual({ reads: 0, writes: 0 });
  });

  it.each([
    { when: "once the deadline has passed", deadline: -1 },
    { when: "when the deadline is due now", deadline: 0 },
  ])("sends nothing $when", async ({ deadline }) => {
    const api = await serve((_req, res) => res.end("{}"));
    const kube = new KubeClient(plain(api.url), { deadline, clock: stillClock() });
    const err = await failure(kube.request("GET", "/api/v1/namespaces"));
    expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({
      status: 0,
      reason: "DeadlineExceeded",
      message: "GET /api/v1/namespaces: not sent, the invocation's deadline has passed",
    });
    expect(api.seen).toEqual([]);
    expect(kube.stats).toEqual({ reads: 0, writes: 0 });
  });

  it("fails with a network error naming the request when nothing listens", async () => {
    const api = await serve(() => undefined);
    await new Promise((r) => servers.pop()!.close(r));
    const err = await failure(new KubeClient(plain(api.url)).request("GET", "/api/v1/namespaces"));
    expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({
      status: 0,
      reason: "NetworkError",
      message: `GET /api/v1/namespaces: connect ECONNREFUSED 127.0.0.1:${api.port}`,
    });
  });
});

describe("a request's time limit", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Whether the promise has settled, after the I/O callbacks now due have run. */
  async function settledYet(p: Promise<unknown>): Promise<boolean> {
    let settled = false;
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise<void>((r) => setImmediate(r));
    return settled;
  }

  const cases = [
    {
      name: "without a deadline, 10 s: the request's own limit",
      deadline: undefined,
      ms: 10_000,
      reason: "Timeout",
      message: "GET /api/v1/namespaces: no complete answer within 10000 ms",
    },
    {
      name: "with the deadline exactly 10 s away, the request's own limit",
      deadline: 10_000,
      ms: 10_000,
      reason: "Timeout",
      message: "GET /api/v1/namespaces: no complete answer within 10000 ms",
    },
    {
      name: "with a nearer deadline, the deadline",
      deadline: 4_000,
      ms: 4_000,
      reason: "DeadlineExceeded",
      message: "GET /api/v1/namespaces: cut off, the invocation's deadline has passed",
    },
  ];
  it.each(cases)("is, $name", async ({ deadline, ms, reason, message }) => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const api = await serve(() => {
      // Never answers.
    });
    const kube = new KubeClient(plain(api.url), deadline === undefined ? {} : { deadline, clock: stillClock() });
    const pending = kube.request("GET", "/api/v1/namespaces");
    while (api.seen.length === 0) await new Promise<void>((r) => setImmediate(r));
    vi.advanceTimersByTime(ms - 1);
    expect(await settledYet(pending)).toBe(false);
    vi.advanceTimersByTime(1);
    const err = await failure(pending);
    expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({ status: 0, reason, message });
  });

  it("leaves no timer and no abort listener behind once answered", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let answer!: () => void;
    const api = await serve((_req, res) => (answer = () => res.end('{"kind":"Namespace"}')));
    const invocation = new AbortController();
    const pending = new KubeClient(plain(api.url), { signal: invocation.signal }).request(
      "GET",
      "/api/v1/namespaces/a",
    );
    while (api.seen.length === 0) await new Promise<void>((r) => setImmediate(r));
    expect(vi.getTimerCount()).toBe(1);
    expect(getEventListeners(invocation.signal, "abort")).toHaveLength(1);
    answer();
    expect(await pending).toEqual({ kind: "Namespace" });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(invocation.signal, "abort")).toHaveLength(0);
  });
});

describe("systemClock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const state = (p: Promise<void>) => {
    const s = { done: false };
    void p.then(() => (s.done = true));
    return s;
  };

  it("sleeps as long as asked, and then leaves no listener on the signal", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const invocation = new AbortController();
    const sleep = state(systemClock.sleep(1000, invocation.signal));
    expect(getEventListeners(invocation.signal, "abort")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(sleep.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(sleep.done).toBe(true);
    expect(getEventListeners(invocation.signal, "abort")).toHaveLength(0);
  });

  it("wakes at once when the signal aborts, leaving no timer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const invocation = new AbortController();
    const sleep = systemClock.sleep(60_000, invocation.signal);
    expect(vi.getTimerCount()).toBe(1);
    invocation.abort();
    await sleep;
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(invocation.signal, "abort")).toHaveLength(0);
  });
});

describe("429 Retry-After", () => {
  const throttleOnce = (retryAfter: string) => {
    let calls = 0;
    return serve((_req, res) => {
      if (calls++ === 0) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": retryAfter });
        return res.end(JSON.stringify({ kind: "Status", reason: "TooManyRequests", message: "too many requests" }));
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"kind":"Namespace"}');
    });
  };

  it("waits as long as the server asks and tries again, within the deadline", async () => {
    const api = await throttleOnce("2");
    const clock = stillClock();
    const kube = new KubeClient(plain(api.url), { deadline: 20_000, clock });
    await expect(kube.request("GET", "/api/v1/namespaces/a")).resolves.toEqual({ kind: "Namespace" });
    expect(clock.slept).toEqual([2000]);
    expect(api.seen).toHaveLength(2);
  });

  it("does not wait past the deadline: the error carries Retry-After for the caller's 503", async () => {
    const api = await throttleOnce("30");
    const clock = stillClock();
    const err = await failure(
      new KubeClient(plain(api.url), { deadline: 20_000, clock }).request("GET", "/api/v1/namespaces/a"),
    );
    expect(err.status).toBe(429);
    expect(err.retryAfterSeconds).toBe(30);
    expect(clock.slept).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it("does not wait out a Retry-After over 30 s, even without a deadline", async () => {
    const api = await throttleOnce("31");
    const clock = stillClock();
    expect(
      (await failure(new KubeClient(plain(api.url), { clock }).request("GET", "/api/v1/namespaces/a")))
        .retryAfterSeconds,
    ).toBe(31);
    expect(clock.slept).toEqual([]);
  });

  it("waits out a Retry-After of exactly 30 s when no deadline is near", async () => {
    const api = await throttleOnce("30");
    const clock = stillClock();
    await expect(new KubeClient(plain(api.url), { clock }).request("GET", "/api/v1/namespaces/a")).resolves.toEqual({
      kind: "Namespace",
    });
    expect(clock.slept).toEqual([30_000]);
  });

  // The retry must have a full second left after the wait (a tenth of the request timeout).
  it.each([
    { deadline: 2_500, slept: [] },
    { deadline: 3_000, slept: [] },
    { deadline: 3_001, slept: [2_000] },
  ])(
    "with the deadline $deadline ms away, a Retry-After of 2 s gives the sleeps $slept",
    async ({ deadline, slept }) => {
      const api = await throttleOnce("2");
      const clock = stillClock();
      const got = await new KubeClient(plain(api.url), { deadline, clock }).request("GET", "/api/v1/namespaces/a").then(
        (v) => v,
        (e: unknown) => (e as ApiError).status,
      );
      expect(got).toEqual(slept.length ? { kind: "Namespace" } : 429);
      expect(clock.slept).toEqual(slept);
    },
  );

  it("stops after three throttled attempts", async () => {
    const api = await serve((_req, res) => {
      res.writeHead(429, { "retry-after": "1" });
      res.end();
    });
    const clock = stillClock();
    const err = await failure(
      new KubeClient(plain(api.url), { deadline: 60_000, clock }).request("GET", "/api/v1/namespaces/a"),
    );
    expect(err.status).toBe(429);
    expect(clock.slept).toEqual([1000, 1000]);
    expect(api.seen).toHaveLength(3);
  });
});

describe("connect reads a user's kubeconfig as kubectl does", () => {
  const kubeconfig = (server: string, proxyUrl?: string) => {
    const dir = mkdtempSync(join(tmpdir(), "poolrelay-kc-"));
    const file = join(dir, "config");
    const proxy = proxyUrl ? `\n    proxy-url: ${proxyUrl}` : "";
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server}${proxy}
users:
- name: u
  user: {}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`,
    );
    return file;
  };

  /** A CONNECT proxy that tunnels every request to the API server, whatever host it names. */
  async function proxyTo(api: { port: number }) {
    const proxy = await serve((_req, res) => res.writeHead(405).end());
    const server = servers.at(-1)!;
    server.on("connect", (req: http.IncomingMessage, client: import("node:net").Socket) => {
      proxy.seen.push(`CONNECT ${req.url}`);
      const up = connectSocket(api.port, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        up.pipe(client);
        client.pipe(up);
      });
      up.on("error", () => client.destroy());
      client.on("error", () => up.destroy());
    });
    return proxy;
  }

  it("talks plain HTTP to an http:// server (kubectl proxy)", async () => {
    const api = await serve((_req, res) => res.end('{"kind":"NamespaceList","items":[]}'));
    const kube = new KubeClient(await connect(kubeconfig(api.url), {}));
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(api.seen).toEqual(["GET /api/v1/namespaces"]);
  });

  it("goes through the kubeconfig's proxy-url", async () => {
    const api = await serve((_req, res) => res.end('{"kind":"NamespaceList"}'));
    const proxy = await proxyTo(api);
    const kube = new KubeClient(await connect(kubeconfig(`http://kube.invalid:${api.port}`, proxy.url), {}));
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList" });
    expect(proxy.seen).toEqual([`CONNECT kube.invalid:${api.port}`]);
  });

  it("goes through HTTP_PROXY when the kubeconfig names none, and not for NO_PROXY hosts", async () => {
    const api = await serve((_req, res) => res.end('{"kind":"NamespaceList"}'));
    const proxy = await proxyTo(api);
    const viaProxy = new KubeClient(
      await connect(kubeconfig(`http://kube.invalid:${api.port}`), { HTTP_PROXY: proxy.url }),
    );
    await expect(viaProxy.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList" });
    expect(proxy.seen).toEqual([`CONNECT kube.invalid:${api.port}`]);
    const direct = new KubeClient(
      await connect(kubeconfig(api.url), { HTTP_PROXY: proxy.url, NO_PROXY: "kube.invalid" }),
    );
    await expect(direct.request("GET", "/api/v1/pods")).resolves.toEqual({ kind: "NamespaceList" });
    expect(proxy.seen).toHaveLength(1);
    expect(api.seen).toContain("GET /api/v1/pods");
  });
});
