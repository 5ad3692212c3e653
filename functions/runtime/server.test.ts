// The body limit in front of the real Functions Framework app, over real HTTP: a refused body never
// reaches the handler and gets exactly one answer; a body within the limit arrives intact.
import { http } from "@google-cloud/functions-framework";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import { readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { KubeClient } from "../../shared/kube/client.ts";
import { DEFAULT_MAX_EVENT_BYTES as LIMIT } from "./body-limit.ts";
import { serve } from "./serve.ts";
import { sinkPost } from "./sink.ts";
import { functionServer } from "./server.ts";

const seen: CloudEvent[] = [];
let server: Server;
let port: number;

beforeAll(async () => {
  http(
    "body-limit-unit",
    serve("body-limit-unit", async (event) => (seen.push(event), { decision: "Seen" }), {
      kube: async () => new KubeClient({ server: "https://kube.test", httpsOptions: async () => ({}) }),
      config: parseConfig({}),
      now: () => "2026-03-01T00:00:00Z",
      post: sinkPost({}),
      log: () => {},
    }),
  );
  server = functionServer("body-limit-unit", LIMIT, { getTestServer });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
beforeEach(() => {
  seen.length = 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const ce = {
  "ce-specversion": "1.0",
  "ce-id": "e1",
  "ce-source": "/test",
  "ce-type": "com.example.sized",
  "content-type": "application/json",
};
/** A binary-mode CloudEvent body of exactly `bytes` bytes, in a pattern that shows any reordering. */
const sized = (bytes: number) =>
  `{"pad":"${Array.from({ length: bytes - 10 }, (_, i) => String.fromCharCode(97 + (i % 26))).join("")}"}`;

/** Sends raw bytes and reads until the server closes the connection. */
function exchange(parts: (string | Buffer)[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (c: Buffer) => received.push(c));
    // A reset after the answer (the server closed with our bytes unread) ends the exchange like a close.
    socket.on("error", () => {});
    socket.on("close", () => resolve(Buffer.concat(received).toString("latin1")));
    for (const p of parts) socket.write(p);
  });
}
const head = (headers: Record<string, string>) =>
  `POST / HTTP/1.1\r\nHost: t\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
const chunk = (data: string) => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;

/** Posts with Content-Length, or chunked (several writes, no length) — Node's client decides by the header. */
function post(
  body: string,
  mode: "content-length" | "chunked",
  headers: Record<string, string> = ce,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        headers:
          mode === "content-length" ? { ...headers, "content-length": String(Buffer.byteLength(body)) } : headers,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString() }));
      },
    );
    req.on("error", reject);
    for (let i = 0; i < body.length; i += 50_000) req.write(body.slice(i, i + 50_000));
    req.end();
  });
}

const statusLines = (raw: string) => raw.match(/^HTTP\/1\.1 \d{3}.*$/gm) ?? [];
const errorOf = (raw: string) => (JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as { error: string }).error;

describe("a body over the limit", () => {
  it("with Content-Length is answered 413 on the headers alone, once, without the body being sent", async () => {
    const raw = await exchange([head({ ...ce, "content-length": String(LIMIT + 1) })]);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 413 Payload Too Large"]);
    expect(raw).toMatch(/^connection: close$/im);
    expect(raw).toMatch(/^content-type: application\/json$/im);
    expect(errorOf(raw)).toBe(
      `request body of ${LIMIT + 1} bytes is over the limit of ${LIMIT} bytes (MAX_EVENT_BYTES)`,
    );
    expect(seen).toEqual([]);
  });

  it("chunked is answered 413 once the count passes the limit, once, and the connection is closed", async () => {
    // One byte over, and no end of the body: only the count can refuse it, and only the server's close ends this.
    const raw = await exchange([head({ ...ce, "transfer-encoding": "chunked" }), chunk(sized(LIMIT)), chunk("x")]);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 413 Payload Too Large"]);
    expect(errorOf(raw)).toBe(
      `request body of at least ${LIMIT + 1} bytes is over the limit of ${LIMIT} bytes (MAX_EVENT_BYTES)`,
    );
    expect(seen).toEqual([]);
  });

  it("chunked, that goes on after the refusal, is answered once and read no further, and the server serves on", async () => {
    const socket = connect(port, "127.0.0.1");
    let raw = "";
    socket.on("data", (c: Buffer) => (raw += c.toString("latin1")));
    socket.on("error", () => {});
    const closed = new Promise<void>((r) => socket.on("close", () => r()));
    socket.write(head({ ...ce, "transfer-encoding": "chunked" }));
    socket.write(chunk(sized(LIMIT)) + chunk("x"));
    // More of the body after the refusal, in later reads.
    for (let i = 0; i < 5 && !socket.destroyed; i++) {
      await new Promise((r) => setTimeout(r, 20));
      socket.write(chunk("more".repeat(1_000)));
    }
    socket.end();
    await closed;
    expect(statusLines(raw)).toEqual(["HTTP/1.1 413 Payload Too Large"]);
    expect(seen).toEqual([]);
    expect(await post(sized(100), "content-length")).toEqual({ status: 204, text: "" });
  });

  it("announced with Expect: 100-continue is refused before the client is told to send it", async () => {
    const raw = await exchange([head({ ...ce, "content-length": String(LIMIT + 1), expect: "100-continue" })]);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 413 Payload Too Large"]);
    expect(seen).toEqual([]);
  });

  it("compressed is answered 415 whatever its size: the limit could not bound what it expands to", async () => {
    const raw = await exchange([head({ ...ce, "content-encoding": "gzip", "content-length": "20" })]);
    expect(statusLines(raw)).toEqual(["HTTP/1.1 415 Unsupported Media Type"]);
    expect(errorOf(raw)).toMatch(/^Content-Encoding gzip is not accepted/);
    expect(seen).toEqual([]);
  });
});

describe("a body within the limit", () => {
  it.each(["content-length", "chunked"] as const)(
    "of exactly the limit reaches the handler intact (%s)",
    async (mode) => {
      const body = sized(LIMIT);
      expect(Buffer.byteLength(body)).toBe(LIMIT);
      expect(await post(body, mode)).toEqual({ status: 204, text: "" });
      expect(seen.map((e) => e.data)).toEqual([JSON.parse(body)]);
    },
  );

  it("with Expect: 100-continue is told to continue, and only then sends it", async () => {
    const body = sized(100);
    // Waits for 100 Continue before sending the body, as a client that honours it; gives up after 2 s.
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      let received = "";
      const done = () => (clearTimeout(timer), socket.destroy(), resolve(received));
      const timer = setTimeout(done, 2_000);
      socket.on("data", (c: Buffer) => {
        const first = received === "";
        received += c.toString("latin1");
        if (first && received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) socket.write(body);
        if (/HTTP\/1\.1 204 /.test(received)) done();
      });
      socket.write(head({ ...ce, "content-length": String(Buffer.byteLength(body)), expect: "100-continue" }));
    });
    expect(statusLines(raw)).toEqual(["HTTP/1.1 100 Continue", "HTTP/1.1 204 No Content"]);
    expect(seen).toHaveLength(1);
  });

  it("with Expect: 100-continue is told to send it and reaches the handler", async () => {
    expect(await post(sized(100), "content-length", { ...ce, expect: "100-continue" })).toEqual({
      status: 204,
      text: "",
    });
    expect(seen).toHaveLength(1);
  });

  it.each(["content-length", "chunked"] as const)(
    "a DGD event as the ApiServerSource sends it reaches the handler (%s)",
    async (mode) => {
      const fixture = JSON.parse(
        readFileSync(new URL("../../test/fixtures/knative/apiserversource-dgd-update.json", import.meta.url), "utf8"),
      ) as { headers: Record<string, string>; body: string };
      expect(await post(fixture.body, mode, fixture.headers)).toEqual({ status: 204, text: "" });
      expect(seen.map((e) => [e.id, e.type, e.data])).toEqual([
        [fixture.headers["ce-id"], "dev.knative.apiserver.resource.update", JSON.parse(fixture.body)],
      ]);
    },
  );

  it("leaves requests without a body to the function", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "body-limit-unit accepts CloudEvents by POST, got GET" });
  });
});

describe("functionServer", () => {
  it("refuses a framework server that has other than its one app listening", () => {
    const server = createServer();
    server.on("request", () => {});
    server.on("request", () => {});
    expect(() => functionServer("two-apps", LIMIT, { getTestServer: () => server })).toThrow(
      new Error("the Functions Framework's server has 2 request listeners, expected its one app"),
    );
  });
});
