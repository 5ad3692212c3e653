// connect() against loopback API servers, plain and TLS, directly and through a CONNECT proxy: which
// kubeconfig is read, whose certificate is trusted, which credentials go out, which proxy carries them.
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { connect as connectSocket, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { TLSSocket } from "node:tls";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KubeClient, connect } from "./client.ts";
import { ApiError } from "./errors.ts";
import { TEST_CERT as CERT, TEST_KEY as KEY, rejectedWith } from "../../test/kube-support.ts";

const servers: http.Server[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((s) => (s.closeAllConnections(), new Promise((r) => s.close(r)))));
});

interface Api {
  url: string;
  port: number;
  /** Each request as "METHOD url", and its Authorization header. */
  seen: string[];
  auth: (string | undefined)[];
  /** The client's port of each request's connection. */
  ports: (number | undefined)[];
  /** Whether each request's TLS connection resumed an earlier session. */
  resumed: boolean[];
}

/** A loopback API server, TLS with the test certificate when `tls`, answering every request with a NamespaceList. */
async function apiServer(tls: boolean): Promise<Api> {
  const api = {
    seen: [] as string[],
    auth: [] as (string | undefined)[],
    ports: [] as (number | undefined)[],
    resumed: [] as boolean[],
  };
  const handler: http.RequestListener = (req, res) => {
    api.seen.push(`${req.method} ${req.url}`);
    api.auth.push(req.headers.authorization);
    api.ports.push(req.socket.remotePort);
    api.resumed.push(req.socket instanceof TLSSocket && req.socket.isSessionReused());
    res.writeHead(200, { "content-type": "application/json" }).end('{"kind":"NamespaceList","items":[]}');
  };
  const server = tls ? https.createServer({ cert: CERT, key: KEY }, handler) : http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(api, { url: `${tls ? "https" : "http"}://127.0.0.1:${port}`, port });
}

/** A CONNECT proxy that tunnels every request to the API server, whatever host it names. */
async function proxyTo(api: { port: number }): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on("connect", (req: http.IncomingMessage, client: Socket) => {
    seen.push(`CONNECT ${req.url}`);
    const up = connectSocket(api.port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.pipe(client);
      client.pipe(up);
    });
    up.on("error", () => client.destroy());
    client.on("error", () => up.destroy());
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

interface Kubeconfig {
  server: string;
  ca?: boolean;
  user?: string;
  currentContext?: string;
}

function kubeconfig({ server, ca = false, user = "{}", currentContext = "x" }: Kubeconfig): string {
  const dir = mkdtempSync(join(tmpdir(), "poolrelay-kc-"));
  const file = join(dir, "config");
  const caData = ca ? `\n    certificate-authority-data: ${Buffer.from(CERT).toString("base64")}` : "";
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ${server}${caData}
users:
- name: u
  user: ${user}
contexts:
- name: x
  context: {cluster: c, user: u}
- name: stranger
  context: {cluster: c, user: nobody}
${currentContext ? `current-context: ${currentContext}` : ""}
`,
  );
  return file;
}

const failure = (p: Promise<unknown>) => rejectedWith(p, Error);

describe("connect", () => {
  it("trusts an https API server's certificate through the kubeconfig's CA, and sends the user's token", async () => {
    const api = await apiServer(true);
    const kube = new KubeClient(await connect(kubeconfig({ server: api.url, ca: true, user: "{token: s3cret}" }), {}));
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(api.seen).toEqual(["GET /api/v1/namespaces"]);
    expect(api.auth).toEqual(["Bearer s3cret"]);
  });

  it("makes one full TLS handshake when a cold client sends several requests at once: the other connections resume its session", async () => {
    const api = await apiServer(true);
    const kube = new KubeClient(await connect(kubeconfig({ server: api.url, ca: true, user: "{token: s3cret}" }), {}));
    await Promise.all([1, 2, 3, 4].map(() => kube.request("GET", "/api/v1/namespaces")));
    expect(api.seen).toHaveLength(4);
    const connections = new Map(api.ports.map((port, i) => [port, api.resumed[i]]));
    expect(connections.size).toBeGreaterThan(1);
    expect([...connections.values()].filter((resumed) => !resumed)).toHaveLength(1);
  });

  it("lets the others go once the first connection has the server's session ticket, before the server answers it", async () => {
    const resumed = new Map<string, boolean>();
    let held: http.ServerResponse | undefined;
    const answer = (res: http.ServerResponse) =>
      res.writeHead(200, { "content-type": "application/json" }).end('{"kind":"Namespace"}');
    const server = https.createServer({ cert: CERT, key: KEY }, (req, res) => {
      resumed.set(req.url!, (req.socket as TLSSocket).isSessionReused());
      if (req.url === "/api/v1/namespaces/slow") held = res;
      else answer(res);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kube = new KubeClient(await connect(kubeconfig({ server: url, ca: true, user: "{token: s3cret}" }), {}));
    const slow = kube.request("GET", "/api/v1/namespaces/slow");
    await expect(kube.request("GET", "/api/v1/namespaces/quick")).resolves.toEqual({ kind: "Namespace" });
    expect(held).toBeDefined();
    expect(Object.fromEntries(resumed)).toEqual({ "/api/v1/namespaces/slow": false, "/api/v1/namespaces/quick": true });
    answer(held!);
    await expect(slow).resolves.toEqual({ kind: "Namespace" });
  });

  it("opens ahead the connection the first request goes over (preconnect): a GET of /version, then that request on the same connection", async () => {
    const api = await apiServer(true);
    const kube = new KubeClient(await connect(kubeconfig({ server: api.url, ca: true, user: "{token: s3cret}" }), {}));
    await kube.preconnect();
    await kube.request("GET", "/api/v1/namespaces");
    expect(api.seen).toEqual(["GET /version", "GET /api/v1/namespaces"]);
    expect(api.ports[1]).toBe(api.ports[0]);
    expect(api.auth).toEqual(["Bearer s3cret", "Bearer s3cret"]);
  });

  it("never fails to preconnect: the first request reports what is wrong", async () => {
    const api = await apiServer(true);
    const kube = new KubeClient(await connect(kubeconfig({ server: api.url }), {}));
    await expect(kube.preconnect()).resolves.toBeUndefined();
    expect((await failure(kube.request("GET", "/api/v1/namespaces"))).message).toBe(
      "GET /api/v1/namespaces: self-signed certificate",
    );
  });

  it("refuses an https API server whose certificate the kubeconfig does not vouch for", async () => {
    const api = await apiServer(true);
    const err = await failure(
      new KubeClient(await connect(kubeconfig({ server: api.url }), {})).request("GET", "/api/v1/namespaces"),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect({ reason: (err as ApiError).reason, message: err.message }).toEqual({
      reason: "NetworkError",
      message: "GET /api/v1/namespaces: self-signed certificate",
    });
    expect(api.seen).toEqual([]);
  });

  it("sends the user's token to a plain http:// server too", async () => {
    const api = await apiServer(false);
    const kube = new KubeClient(await connect(kubeconfig({ server: api.url, user: "{token: s3cret}" }), {}));
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(api.auth).toEqual(["Bearer s3cret"]);
  });

  it("goes anonymously to a plain http:// server when the context's user is not in the kubeconfig", async () => {
    const api = await apiServer(false);
    const kube = new KubeClient(
      await connect(kubeconfig({ server: api.url, user: "{token: s3cret}", currentContext: "stranger" }), {}),
    );
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(api.seen).toEqual(["GET /api/v1/namespaces"]);
    expect(api.auth).toEqual([undefined]);
  });

  it("tunnels to an https API server through HTTPS_PROXY", async () => {
    const api = await apiServer(true);
    const proxy = await proxyTo(api);
    const kube = new KubeClient(
      await connect(kubeconfig({ server: `https://kube.invalid:${api.port}`, ca: true }), {
        HTTPS_PROXY: proxy.url,
        HTTP_PROXY: "http://127.0.0.1:9",
      }),
    );
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(proxy.seen).toEqual([`CONNECT kube.invalid:${api.port}`]);
    expect(api.seen).toEqual(["GET /api/v1/namespaces"]);
  });

  it("keeps a proxy's tunnel open for the next request", async () => {
    const api = await apiServer(false);
    const proxy = await proxyTo(api);
    const kube = new KubeClient(
      await connect(kubeconfig({ server: `http://kube.invalid:${api.port}` }), { HTTP_PROXY: proxy.url }),
    );
    await kube.request("GET", "/api/v1/namespaces");
    await kube.request("GET", "/api/v1/pods");
    expect(api.seen).toEqual(["GET /api/v1/namespaces", "GET /api/v1/pods"]);
    expect(proxy.seen).toEqual([`CONNECT kube.invalid:${api.port}`]);
  });

  it("reads the default kubeconfig (KUBECONFIG) when given no file", async () => {
    const api = await apiServer(false);
    vi.stubEnv("KUBECONFIG", kubeconfig({ server: api.url }));
    const kube = new KubeClient(await connect(undefined, {}));
    await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
    expect(api.seen).toEqual(["GET /api/v1/namespaces"]);
  });

  describe("with credentials only client-node reads (basic auth)", () => {
    const basic = `Basic ${Buffer.from("a:b").toString("base64")}`;

    it("reads the default kubeconfig (KUBECONFIG) when given no file", async () => {
      const api = await apiServer(false);
      vi.stubEnv("KUBECONFIG", kubeconfig({ server: api.url, user: "{username: a, password: b}" }));
      const kube = new KubeClient(await connect(undefined, {}));
      await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
      expect(api.auth).toEqual([basic]);
    });

    it("keeps the connection alive, with the product's agent rather than client-node's", async () => {
      const api = await apiServer(true);
      const kube = new KubeClient(
        await connect(kubeconfig({ server: api.url, ca: true, user: "{username: a, password: b}" }), {}),
      );
      await kube.request("GET", "/api/v1/namespaces");
      await kube.request("GET", "/api/v1/pods");
      expect(api.auth).toEqual([basic, basic]);
      expect(api.ports[0]).toBeGreaterThan(0);
      expect(api.ports[1]).toBe(api.ports[0]);
    });

    it("tunnels to an https API server through HTTPS_PROXY", async () => {
      const api = await apiServer(true);
      const proxy = await proxyTo(api);
      const kube = new KubeClient(
        await connect(
          kubeconfig({ server: `https://kube.invalid:${api.port}`, ca: true, user: "{username: a, password: b}" }),
          { HTTPS_PROXY: proxy.url },
        ),
      );
      await expect(kube.request("GET", "/api/v1/namespaces")).resolves.toEqual({ kind: "NamespaceList", items: [] });
      expect(proxy.seen).toEqual([`CONNECT kube.invalid:${api.port}`]);
      expect(api.auth).toEqual([basic]);
    });
  });

  it("refuses a kubeconfig file with no current context, naming the file", async () => {
    const file = kubeconfig({ server: "http://127.0.0.1:9", currentContext: "" });
    expect((await failure(connect(file, {}))).message).toBe(`no current cluster in ${file}`);
  });

  it("refuses a default kubeconfig with no current context", async () => {
    vi.stubEnv("KUBECONFIG", kubeconfig({ server: "http://127.0.0.1:9", currentContext: "" }));
    expect((await failure(connect(undefined, {}))).message).toBe("no current cluster in the default kubeconfig");
  });
});
