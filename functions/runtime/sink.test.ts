// The sink client: follows HTTP_PROXY/HTTPS_PROXY/NO_PROXY as Knative's Go clients do, keeps its
// connections for the next event, and reports the answer's status.
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sinkPost } from "./sink.ts";

let target: Server;
let proxy: Server;
let targetPort: number;
let proxyPort: number;
/** How the proxy was asked: "absolute <url>" or "CONNECT <authority>". */
const proxied: string[] = [];
/** Connections the target accepted, and the request bodies it read. */
let connections = 0;
const bodies: string[] = [];
/** The target's requests as `METHOD path?query`. */
const requests: string[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      bodies.push(body);
      requests.push(`${req.method} ${req.url}`);
      const status = Number(req.headers["x-answer"] ?? 202);
      res
        .writeHead(status, { "content-type": "text/plain" })
        .end(`answered ${status} to ${req.headers.host} ${req.url}`);
    });
  });
  target.on("connection", () => connections++);
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
  targetPort = (target.address() as { port: number }).port;
  // A forward proxy: absolute-form requests (plain http) and CONNECT tunnels, both to the target.
  proxy = createServer((req, res) => {
    proxied.push(`absolute ${req.url}`);
    const url = new URL(req.url ?? "");
    req.pipe(
      request(
        { host: "127.0.0.1", port: targetPort, method: req.method, path: url.pathname, headers: req.headers },
        (up) => (res.writeHead(up.statusCode ?? 502, up.headers), up.pipe(res)),
      ),
    );
  });
  proxy.on("connect", (req, socket, head) => {
    proxied.push(`CONNECT ${req.url}`);
    const up = connect(targetPort, "127.0.0.1", () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyPort = (proxy.address() as { port: number }).port;
});
afterAll(async () => {
  proxy.closeAllConnections();
  target.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await new Promise((r) => target.close(r));
});

const never = new AbortController().signal;

describe("sinkPost", () => {
  it("posts the body with the headers and resolves with the answer's status", async () => {
    const post = sinkPost({});
    const before = bodies.length;
    expect(await post(`http://127.0.0.1:${targetPort}/ns/b`, { "ce-id": "1" }, '{"a":1}', never)).toBe(202);
    expect(await post(`http://127.0.0.1:${targetPort}/ns/b`, { "x-answer": "404" }, "{}", never)).toBe(404);
    expect(bodies.slice(before)).toEqual(['{"a":1}', "{}"]);
  });

  it("posts to the sink's own path and query", async () => {
    const before = requests.length;
    expect(
      await sinkPost({})(`http://127.0.0.1:${targetPort}/dynamo-system/dynamo-pool-relay?x=1`, {}, "{}", never),
    ).toBe(202);
    expect(requests.slice(before)).toEqual(["POST /dynamo-system/dynamo-pool-relay?x=1"]);
  });

  it("keeps one connection for events sent one after another", async () => {
    const post = sinkPost({});
    const before = connections;
    for (let i = 0; i < 5; i++)
      expect(await post(`http://127.0.0.1:${targetPort}/`, {}, `{"i":${i}}`, never)).toBe(202);
    expect(connections - before).toBe(1);
  });

  it("sends to a plain http:// cluster address through HTTP_PROXY in absolute form", async () => {
    const post = sinkPost({ HTTP_PROXY: `http://127.0.0.1:${proxyPort}` });
    proxied.length = 0;
    expect(await post("http://broker-ingress.knative-eventing.svc.cluster.local/ns/b", {}, "{}", never)).toBe(202);
    expect(proxied).toEqual(["absolute http://broker-ingress.knative-eventing.svc.cluster.local/ns/b"]);
  });

  it("tunnels to an https:// sink through HTTPS_PROXY with CONNECT", async () => {
    // The target speaks plain HTTP, so the TLS handshake inside the tunnel fails: what matters is the CONNECT.
    const post = sinkPost({ HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`, HTTP_PROXY: "http://127.0.0.1:9" });
    proxied.length = 0;
    await expect(
      post("https://broker-ingress.knative-eventing.svc.cluster.local/ns/b", {}, "{}", never),
    ).rejects.toThrow();
    expect(proxied).toEqual(["CONNECT broker-ingress.knative-eventing.svc.cluster.local:443"]);
  });

  it("goes direct to a NO_PROXY host, in lower-case spelling too", async () => {
    const post = sinkPost({ http_proxy: `http://127.0.0.1:${proxyPort}`, no_proxy: "127.0.0.1" });
    proxied.length = 0;
    expect(await post(`http://127.0.0.1:${targetPort}/`, {}, "{}", never)).toBe(202);
    expect(proxied).toEqual([]);
  });

  it("rejects when the sink cannot be reached, and when the signal aborts", async () => {
    await expect(sinkPost({})("http://127.0.0.1:9/", {}, "{}", never)).rejects.toThrow(/ECONNREFUSED/);
    await expect(sinkPost({})(`http://127.0.0.1:${targetPort}/`, {}, "{}", AbortSignal.abort())).rejects.toThrow(
      /abort/i,
    );
  });
});
