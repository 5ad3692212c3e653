// The sink client follows HTTP_PROXY/HTTPS_PROXY/NO_PROXY as Knative's Go clients do.
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sinkFetch } from "./serve.ts";

let target: Server;
let proxy: Server;
let targetPort: number;
let proxyPort: number;
/** host[:port] of every request the proxy carried. */
const proxied: string[] = [];

beforeAll(async () => {
  target = createServer((req, res) => res.writeHead(202, { "x-host": req.headers.host ?? "" }).end());
  await new Promise<void>((r) => target.listen(0, "127.0.0.1", r));
  targetPort = (target.address() as { port: number }).port;
  // A forward proxy: absolute-form requests (plain http) and CONNECT tunnels, both to the target.
  proxy = createServer((req, res) => {
    const url = new URL(req.url ?? "");
    proxied.push(url.host);
    req.pipe(request({ host: "127.0.0.1", port: targetPort, method: req.method, path: url.pathname, headers: req.headers }, (up) => (res.writeHead(up.statusCode ?? 502, up.headers), up.pipe(res))));
  });
  proxy.on("connect", (req, socket, head) => {
    proxied.push(req.url ?? "");
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
  await new Promise((r) => proxy.close(r));
  await new Promise((r) => target.close(r));
});

describe("sinkFetch", () => {
  it("is the global fetch when no proxy is configured", () => {
    expect(sinkFetch({})).toBe(globalThis.fetch);
  });

  it("sends to a cluster address through HTTP_PROXY", async () => {
    const res = await sinkFetch({ HTTP_PROXY: `http://127.0.0.1:${proxyPort}` })("http://broker-ingress.knative-eventing.svc.cluster.local/ns/b", { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    expect(res.headers.get("x-host")).toBe("broker-ingress.knative-eventing.svc.cluster.local");
    expect(proxied.map((h) => h.replace(/:80$/, ""))).toContain("broker-ingress.knative-eventing.svc.cluster.local");
  });

  it("goes direct to a NO_PROXY host, in lower-case spelling too", async () => {
    const before = proxied.length;
    const res = await sinkFetch({ http_proxy: `http://127.0.0.1:${proxyPort}`, no_proxy: "127.0.0.1" })(`http://127.0.0.1:${targetPort}/`, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    expect(proxied.length).toBe(before);
  });
});
