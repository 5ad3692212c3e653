import { createServer, request, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DeliveryFaults } from "./delivery-faults.ts";
import { ClusterProxy, forwardHeaders, parseServiceHost, target } from "./proxy.ts";

describe("parseServiceHost", () => {
  it.each([
    ["broker-ingress.knative-eventing.svc.cluster.local", { name: "broker-ingress", namespace: "knative-eventing" }],
    ["broker-ingress.knative-eventing.svc.cluster.local.", { name: "broker-ingress", namespace: "knative-eventing" }],
    ["broker-ingress.knative-eventing.svc", { name: "broker-ingress", namespace: "knative-eventing" }],
    ["Broker-Ingress.Knative-Eventing", { name: "broker-ingress", namespace: "knative-eventing" }],
    ["a.b.svc.example.org", undefined],
    ["a.b.c.d", undefined],
    ["localhost", undefined],
    // As cluster DNS with its search path: name.namespace, which only a Service lookup can tell from a domain.
    ["example.com", { name: "example", namespace: "com" }],
    ["kubernetes.default.svc", { name: "kubernetes", namespace: "default" }],
    ["-bad.ns.svc", undefined],
  ])("%s", (host, expected) => {
    expect(parseServiceHost(host)).toEqual(expected);
  });

  it("follows the cluster domain it is given", () => {
    expect(parseServiceHost("a.b.svc.corp.internal", "corp.internal")).toEqual({ name: "a", namespace: "b" });
    expect(parseServiceHost("a.b.svc.cluster.local", "corp.internal")).toBeUndefined();
  });
});

describe("target", () => {
  it.each([
    ["a.b.svc:8080", 80, { host: "a.b.svc", port: 8080 }],
    ["a.b.svc", 80, { host: "a.b.svc", port: 80 }],
    ["[::1]:443", 443, { host: "::1", port: 443 }],
  ])("%s", (authority, defaultPort, expected) => {
    expect(target(authority, defaultPort)).toEqual(expected);
  });
});

describe("forwardHeaders", () => {
  it("keeps end-to-end headers and drops hop-by-hop ones and those the Connection header names", () => {
    expect(forwardHeaders({
      "ce-id": "1", "content-type": "application/json", connection: "keep-alive, x-hop", "keep-alive": "timeout=5", "x-hop": "1",
      "proxy-connection": "keep-alive", "transfer-encoding": "chunked", host: "a.b.svc",
    })).toEqual({ "ce-id": "1", "content-type": "application/json", host: "a.b.svc" });
  });
});

describe("ClusterProxy", () => {
  let upstream: Server;
  let upstreamPort: number;
  let proxy: ClusterProxy;
  let proxyPort: number;
  const refused: string[] = [];
  const seen: { url: string; host: string; body: string }[] = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ url: req.url ?? "", host: req.headers.host ?? "", body });
        res.writeHead(202, { "x-upstream": "yes" }).end("accepted");
      });
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    upstreamPort = (upstream.address() as { port: number }).port;
    proxy = new ClusterProxy({
      resolve: async (host, port) => (host === "broker-ingress.knative-eventing.svc.cluster.local" && port === 80 ? { port: upstreamPort } : undefined),
      onRefused: (address) => refused.push(address),
    });
    proxyPort = await proxy.listen();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((r) => upstream.close(r));
  });

  function viaProxy(path: string, body: string): Promise<{ status: number; headers: IncomingMessage["headers"]; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: proxyPort, method: "POST", path, headers: { host: new URL(path).host, "proxy-connection": "keep-alive" } }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  it("forwards an absolute-form request to the local process, keeping the Host and the body, without proxy headers", async () => {
    const r = await viaProxy("http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/b?x=1", "event");
    expect(r).toMatchObject({ status: 202, text: "accepted" });
    expect(r.headers["x-upstream"]).toBe("yes");
    expect(seen.at(-1)).toEqual({ url: "/dynamo-system/b?x=1", host: "broker-ingress.knative-eventing.svc.cluster.local", body: "event" });
  });

  it("tunnels a CONNECT to the local process", async () => {
    const socket = connect(proxyPort, "127.0.0.1");
    const reply = await new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (c: Buffer) => {
        text += c.toString();
        if (text.startsWith("HTTP/1.1 200") && !text.includes("accepted") && text.includes("\r\n\r\n") && !text.includes("POST")) {
          socket.write("POST /tunnelled HTTP/1.1\r\nhost: broker-ingress.knative-eventing.svc.cluster.local\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi");
        }
        if (text.includes("accepted")) resolve(text);
      });
      socket.write("CONNECT broker-ingress.knative-eventing.svc.cluster.local:80 HTTP/1.1\r\nhost: broker-ingress.knative-eventing.svc.cluster.local:80\r\n\r\n");
    });
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 202/);
    expect(seen.at(-1)).toMatchObject({ url: "/tunnelled", body: "hi" });
  });

  it("refuses, and reports, an address it cannot map: nothing is sent anywhere", async () => {
    const before = seen.length;
    const r = await viaProxy("http://example.com/", "x");
    expect(r.status).toBe(403);
    expect(r.text).toMatch(/example\.com:80 is not a cluster address served on this host/);
    expect(refused).toContain("example.com:80");
    const socket = connect(proxyPort, "127.0.0.1");
    const reply = await new Promise<string>((resolve) => {
      socket.on("data", (c: Buffer) => resolve(c.toString()));
      socket.write("CONNECT 93.184.216.34:443 HTTP/1.1\r\nhost: 93.184.216.34:443\r\n\r\n");
    });
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 403/);
    expect(refused).toContain("93.184.216.34:443");
    expect(seen.length).toBe(before);
  });

  it("answers 400 to a request that is not for a proxy", async () => {
    const r = await new Promise<number>((resolve) => {
      request({ host: "127.0.0.1", port: proxyPort, path: "/direct" }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).end();
    });
    expect(r).toBe(400);
  });
});

describe("ClusterProxy delivery faults", () => {
  let upstream: Server;
  let proxy: ClusterProxy;
  let proxyPort: number;
  const seen: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "poolrelay-faults-"));
  const file = join(dir, "delivery-faults.json");
  const setRates = (rates: Record<string, number>) => writeFileSync(file, JSON.stringify({ seed: 1, hosts: ["fn.ns"], rates }));

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => (seen.push(body), res.writeHead(200).end("done")));
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const port = (upstream.address() as { port: number }).port;
    proxy = new ClusterProxy({ resolve: async () => ({ port }), onRefused: () => {}, faults: new DeliveryFaults(file) });
    proxyPort = await proxy.listen();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((r) => upstream.close(r));
  });

  const deliver = (host: string, body: string) =>
    new Promise<{ status: number } | { error: string }>((resolve) => {
      const req = request({ host: "127.0.0.1", port: proxyPort, method: "POST", path: `http://${host}/`, headers: { host } }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
      });
      req.on("error", (err) => resolve({ error: err.message }));
      req.end(body);
    });

  it("answers 503 without forwarding, only for the hosts named", async () => {
    setRates({ unavailable: 1 });
    expect(await deliver("fn.ns.svc.cluster.local", "a")).toEqual({ status: 503 });
    expect(seen).not.toContain("a");
    expect(await deliver("other.ns.svc.cluster.local", "b")).toEqual({ status: 200 });
    expect(seen).toContain("b");
  });

  it("forwards and loses the reply", async () => {
    setRates({ lostReply: 1 });
    expect(await deliver("fn.ns", "c")).toMatchObject({ error: expect.any(String) });
    expect(seen).toContain("c");
  });

  it("forwards, answers, and delivers the same request again later", async () => {
    setRates({ lateDuplicate: 1 });
    expect(await deliver("fn.ns", "d")).toEqual({ status: 200 });
    await vi.waitFor(() => expect(seen.filter((b) => b === "d")).toHaveLength(2), { timeout: 5000 });
    expect(readFileSync(`${file}.log`, "utf8").split("\n")).toEqual(expect.arrayContaining(["unavailable fn.ns", "lostReply fn.ns", "lateDuplicate fn.ns"]));
  });

  it("injects nothing without the file", async () => {
    rmSync(file);
    expect(await deliver("fn.ns", "e")).toEqual({ status: 200 });
  });
});
