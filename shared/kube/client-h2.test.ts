// HTTP/2 to the API server (./h2.ts): against loopback TLS servers that offer h2, and one that
// offers only http/1.1; what goes over one connection, what opens another, how failures read.
import { spawn } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import tls from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient, REQUEST_TIMEOUT_MS, WRITE_TIMEOUT_MS, simpleConnection } from "./client.ts";
import { H2Sessions, PING_TIMEOUT_MS } from "./h2.ts";
import { ApiError } from "./errors.ts";
import { TEST_CERT, TEST_KEY, rejectedWith } from "../../test/kube-support.ts";

interface Seen {
  /** Each request as "HTTP/version METHOD path". */
  requests: string[];
  auth: (string | undefined)[];
  /** TLS connections the server accepted. */
  connections: number;
}

/** Answers a request; HTTP/2's compatibility response is written as an HTTP/1.1 one is. */
type Respond = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse, body: string) => void;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const namespace = (_req: unknown, res: http.ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Namespace" }));

/** A loopback TLS API server: HTTP/2 (with HTTP/1.1 allowed) unless `http1Only`. */
async function apiServer(
  respond: Respond = namespace,
  http1Only = false,
  settings: http2.Settings = {},
): Promise<{ url: string; seen: Seen; goaway: () => Promise<void> }> {
  const seen: Seen = { requests: [], auth: [], connections: 0 };
  const handler = (
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.requests.push(`HTTP/${req.httpVersion} ${req.method} ${req.url}`);
      seen.auth.push(req.headers.authorization);
      respond(req, res as http.ServerResponse, Buffer.concat(chunks).toString("utf8"));
    });
  };
  const tls = { cert: TEST_CERT, key: TEST_KEY };
  const server = http1Only
    ? https.createServer(tls, handler)
    : http2.createSecureServer({ ...tls, allowHTTP1: true, settings }, handler);
  server.on("secureConnection", () => seen.connections++);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s: http2.ServerHttp2Session) => (sessions.add(s), s.on("close", () => sessions.delete(s))));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => {
    for (const s of sessions) s.destroy();
    if ("closeAllConnections" in server) server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  });
  // Closes every session as a restarting API server does; settles once they are closed.
  const goaway = () =>
    Promise.all([...sessions].map((s) => new Promise<void>((r) => s.close(r)))).then(() => undefined);
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, goaway };
}

/** A TCP relay to `target` whose connections can be frozen as a dead link is: nothing passes, not even a PING. */
async function relay(target: string): Promise<{ url: string; freeze: () => void }> {
  const to = new URL(target);
  const links: [net.Socket, net.Socket][] = [];
  const server = net.createServer((down) => {
    const up = net.connect(Number(to.port), to.hostname);
    down.pipe(up).pipe(down);
    links.push([down, up]);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => {
    for (const [down, up] of links) {
      down.destroy();
      up.destroy();
    }
    return new Promise((r) => server.close(() => r()));
  });
  const freeze = () => {
    for (const [down, up] of links) {
      down.unpipe(up);
      up.unpipe(down);
      down.pause();
      up.pause();
    }
  };
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, freeze };
}

const client = async (url: string, options = {}) =>
  new KubeClient(
    await simpleConnection({ server: url, ca: Buffer.from(TEST_CERT), token: () => "s3cret" }, {}),
    options,
  );
const CHILDREN = [
  "serviceaccounts",
  "roles",
  "rolebindings",
  "configmaps",
  "deployments",
  "services",
  "endpointslices",
  "events",
  "pods",
];

describe("HTTP/2 to the API server", () => {
  it("sends the reads a first event makes at once over one connection, each with the credentials", async () => {
    const api = await apiServer();
    const kube = await client(api.url);
    await kube.preconnect();
    const answers = await Promise.all(CHILDREN.map((c) => kube.request("GET", `/api/v1/namespaces/a/${c}/x`)));
    expect(answers).toEqual(CHILDREN.map(() => ({ kind: "Namespace" })));
    expect(api.seen.requests).toEqual([
      "HTTP/2.0 GET /version",
      ...CHILDREN.map((c) => `HTTP/2.0 GET /api/v1/namespaces/a/${c}/x`),
    ]);
    expect(api.seen.auth).toEqual(CHILDREN.map(() => "Bearer s3cret").concat("Bearer s3cret"));
    expect(api.seen.connections).toBe(1);
  });

  it("keeps to the server's limit of concurrent streams: the reads beyond it wait for a stream, none is refused", async () => {
    let open = 0;
    let most = 0;
    const api = await apiServer(
      (req, res) => {
        most = Math.max(most, ++open);
        setTimeout(() => (open--, namespace(req, res)), 20);
      },
      false,
      { maxConcurrentStreams: 2 },
    );
    const kube = await client(api.url);
    const answers = await Promise.all(CHILDREN.map((c) => kube.request("GET", `/api/v1/namespaces/a/${c}/x`)));
    expect(answers).toEqual(CHILDREN.map(() => ({ kind: "Namespace" })));
    expect(most).toBe(2);
    expect(api.seen.connections).toBe(1);
  });

  it("carries a write's body and content type, and reads the API server's answers as over HTTP/1.1", async () => {
    const bodies: string[] = [];
    const api = await apiServer((req, res, body) => {
      bodies.push(`${req.headers["content-type"]} ${body}`);
      if (req.url?.startsWith("/missing"))
        return res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ kind: "Status", reason: "NotFound", message: "not found" }));
      res
        .writeHead(409, { "content-type": "application/json" })
        .end(JSON.stringify({ kind: "Status", reason: "Conflict", message: "the object has been modified" }));
    });
    const kube = await client(api.url);
    const err = await rejectedWith(
      kube.request(
        "PATCH",
        "/api/v1/namespaces/a/configmaps/x?fieldManager=m",
        { kind: "ConfigMap" },
        "application/apply-patch+yaml",
      ),
      ApiError,
    );
    expect([err.status, err.reason, err.message, err.transient]).toEqual([
      409,
      "Conflict",
      "PATCH /api/v1/namespaces/a/configmaps/x: 409 the object has been modified",
      true,
    ]);
    const missing = await rejectedWith(kube.request("GET", "/missing"), ApiError);
    expect([missing.status, missing.reason, missing.transient]).toEqual([404, "NotFound", false]);
    expect(bodies[0]).toBe('application/apply-patch+yaml {"kind":"ConfigMap"}');
  });

  it("sends a delete's preconditions as its body", async () => {
    const bodies: string[] = [];
    const api = await apiServer((req, res, body) => (bodies.push(`${req.method} ${body}`), namespace(req, res)));
    const kube = await client(api.url);
    await expect(
      kube.deleteExact({ apiVersion: "v1", kind: "Service", namespace: "a", name: "s" }, "uid-1"),
    ).resolves.toBe("deleted");
    expect(bodies.map((b): unknown => JSON.parse(b.slice("DELETE ".length)))).toEqual([
      expect.objectContaining({ preconditions: { uid: "uid-1" } }),
    ]);
  });

  it("waits out a 429's Retry-After and asks again on the same connection", async () => {
    let calls = 0;
    const api = await apiServer((_req, res) => {
      if (calls++ === 0)
        return res
          .writeHead(429, { "retry-after": "0", "content-type": "application/json" })
          .end(JSON.stringify({ kind: "Status", reason: "TooManyRequests", message: "slow down" }));
      namespace(_req, res);
    });
    const kube = await client(api.url);
    await expect(kube.request("GET", "/api/v1/namespaces/a")).resolves.toEqual({ kind: "Namespace" });
    expect([api.seen.requests.length, api.seen.connections]).toEqual([2, 1]);
  });

  it("sends a write again, at once, only when the server refused its stream (REFUSED_STREAM: never processed)", async () => {
    const resets: number[] = [];
    const api = await apiServer((req, res) => {
      const code = resets.shift();
      if (code === undefined) return namespace(req, res);
      (res as unknown as http2.Http2ServerResponse).stream.close(code);
    });
    const kube = await client(api.url);
    resets.push(http2.constants.NGHTTP2_REFUSED_STREAM, http2.constants.NGHTTP2_REFUSED_STREAM);
    await expect(kube.request("POST", "/api/v1/namespaces", { kind: "Namespace" })).resolves.toEqual({
      kind: "Namespace",
    });
    expect(api.seen.requests).toEqual(Array(3).fill("HTTP/2.0 POST /api/v1/namespaces"));
    // Any other reset may come after the write was made: the caller decides.
    resets.push(http2.constants.NGHTTP2_INTERNAL_ERROR);
    await expect(kube.request("POST", "/api/v1/namespaces", { kind: "Namespace" })).rejects.toMatchObject({
      reason: "NetworkError",
    });
    expect(api.seen.requests).toHaveLength(4);
  });

  it("opens a new connection once the server closed the last one (GOAWAY)", async () => {
    const api = await apiServer();
    const kube = await client(api.url);
    await kube.request("GET", "/api/v1/namespaces/a");
    const gone = api.goaway();
    await gone;
    await expect(kube.request("GET", "/api/v1/namespaces/b")).resolves.toEqual({ kind: "Namespace" });
    expect(api.seen.connections).toBe(2);
  });

  it("cuts a request at the invocation's deadline and keeps the connection for the next one", async () => {
    const api = await apiServer((req, res) => {
      if (req.url === "/api/v1/namespaces/slow") return; // never answered
      namespace(req, res);
    });
    const kube = await client(api.url);
    const controller = new AbortController();
    const invocation = kube.fork({ signal: controller.signal });
    const slow = rejectedWith(invocation.request("GET", "/api/v1/namespaces/slow"), ApiError);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    expect((await slow).reason).toBe("DeadlineExceeded");
    await expect(kube.request("GET", "/api/v1/namespaces/a")).resolves.toEqual({ kind: "Namespace" });
    expect(api.seen.connections).toBe(1);
  });

  it("keeps a process that has nothing else to do alive while the connection opens, and lets it exit once answered", async () => {
    const api = await apiServer();
    // A command-line process: no server, no timer of its own; only the request.
    const code = `
      import { KubeClient, simpleConnection } from ${JSON.stringify(new URL("./client.ts", import.meta.url).href)};
      const kube = new KubeClient(await simpleConnection({ server: ${JSON.stringify(api.url)}, ca: Buffer.from(${JSON.stringify(TEST_CERT)}), token: () => "t" }, {}));
      console.log(JSON.stringify(await kube.request("GET", "/api/v1/namespaces/a")));`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
    closers.push(async () => void child.kill("SIGKILL"));
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const exitCode = await new Promise((r) => child.on("exit", r));
    expect({ exitCode, out: out.trim() }).toEqual({ exitCode: 0, out: JSON.stringify({ kind: "Namespace" }) });
  });

  it("fails an opening whose server agrees on h2 and then says nothing, after the handshake timeout, and tries again on the next request", async () => {
    const accepted: tls.TLSSocket[] = [];
    const silent = tls.createServer(
      { cert: TEST_CERT, key: TEST_KEY, ALPNProtocols: ["h2"] },
      (socket) => void accepted.push(socket),
    );
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => (accepted.forEach((s) => s.destroy()), silent.close(() => r()))));
    const sessions = new H2Sessions(
      new URL(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`),
      { ca: TEST_CERT },
      100,
    );
    await expect(sessions.session()).rejects.toThrow("no TLS handshake and HTTP/2 settings within 100 ms");
    await expect(sessions.session()).rejects.toThrow("within 100 ms");
    expect(accepted).toHaveLength(2);
  });

  it(
    "keeps a connection that answers a PING when one request goes unanswered for its whole timeout: the others on it go on",
    { timeout: 30_000 },
    async () => {
      const api = await apiServer((req, res) => {
        if (req.url === "/api/v1/namespaces/slow") return; // never answered; the connection is alive
        if (req.url === "/api/v1/namespaces/later")
          return void setTimeout(() => namespace(req, res), REQUEST_TIMEOUT_MS - 1000);
        namespace(req, res);
      });
      const kube = await client(api.url);
      // One request the server is slow on, and one in flight beside it that it answers in time.
      const later = kube.request("GET", "/api/v1/namespaces/later");
      const err = await rejectedWith(kube.request("GET", "/api/v1/namespaces/slow"), ApiError);
      expect([err.reason, err.message, err.transient]).toEqual([
        "Timeout",
        `GET /api/v1/namespaces/slow: no complete answer within ${REQUEST_TIMEOUT_MS} ms`,
        true,
      ]);
      await expect(later).resolves.toEqual({ kind: "Namespace" });
      await new Promise((r) => setTimeout(r, 500)); // the PING's answer
      await expect(kube.request("GET", "/api/v1/namespaces/a")).resolves.toEqual({ kind: "Namespace" });
      expect(api.seen.connections).toBe(1);
    },
  );

  it(
    "gives a write longer than a read: a PATCH the server answers after the read timeout succeeds",
    { timeout: 30_000 },
    async () => {
      const api = await apiServer((req, res) => void setTimeout(() => namespace(req, res), REQUEST_TIMEOUT_MS + 1000));
      const kube = await client(api.url);
      const read = rejectedWith(kube.request("GET", "/api/v1/namespaces/slow"), ApiError);
      const write = kube.request("PATCH", "/api/v1/namespaces/slow", { metadata: {} }, "application/merge-patch+json");
      expect((await read).reason).toBe("Timeout");
      await expect(write).resolves.toEqual({ kind: "Namespace" });
      expect(WRITE_TIMEOUT_MS).toBeGreaterThan(REQUEST_TIMEOUT_MS + 1000);
    },
  );

  it(
    "closes a connection that leaves a request unanswered and then a PING too: the next request opens a new one",
    { timeout: 30_000 },
    async () => {
      const api = await apiServer((req, res) => {
        // The link dies while this request waits: no answer, no PING's answer either.
        if (req.url === "/api/v1/namespaces/dead") return void link.freeze();
        namespace(req, res);
      });
      const link = await relay(api.url);
      const kube = await client(link.url);
      const err = await rejectedWith(kube.request("GET", "/api/v1/namespaces/dead"), ApiError);
      expect([err.reason, err.transient]).toEqual(["Timeout", true]);
      await new Promise((r) => setTimeout(r, PING_TIMEOUT_MS + 500));
      await expect(kube.request("GET", "/api/v1/namespaces/a")).resolves.toEqual({ kind: "Namespace" });
      expect(api.seen.connections).toBe(2);
    },
  );

  it("speaks HTTP/1.1 to a server that offers only http/1.1, from then on", async () => {
    const api = await apiServer(namespace, true);
    const kube = await client(api.url);
    await kube.request("GET", "/api/v1/namespaces/a");
    await kube.request("GET", "/api/v1/namespaces/b");
    expect(api.seen.requests).toEqual(["HTTP/1.1 GET /api/v1/namespaces/a", "HTTP/1.1 GET /api/v1/namespaces/b"]);
  });

  it("fails a request as the HTTP/1.1 client does when the certificate is not vouched for", async () => {
    const api = await apiServer();
    const kube = new KubeClient(await simpleConnection({ server: api.url, token: () => "s3cret" }, {}));
    const err = await rejectedWith(kube.request("GET", "/api/v1/namespaces"), ApiError);
    expect([err.reason, err.message]).toEqual(["NetworkError", "GET /api/v1/namespaces: self-signed certificate"]);
    expect(api.seen.requests).toEqual([]);
  });
});
