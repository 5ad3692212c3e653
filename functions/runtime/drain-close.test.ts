// Drain.close, request by request: when it settles with several requests in flight, what a
// request admitted after it is answered, and the idle connections it closes. The whole stop of a real process as PID 1 is pid1.test.ts.
import { EventEmitter } from "node:events";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent } from "node:http";
import { describe, expect, it } from "vitest";
import { Drain } from "./drain.ts";

/** A response as the listener sees it: `close` once it is answered or cut; what was written. */
class FakeResponse extends EventEmitter {
  headersSent = false;
  shouldKeepAlive = true;
  status: number | undefined;
  headers: Record<string, string | number> = {};
  body: string | undefined;
  writeHead(status: number, headers: Record<string, string | number>) {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }
  end(body?: string) {
    this.body = body;
    this.emit("close");
    return this;
  }
}

/** A server whose close and closeIdleConnections are only counted. */
const fakeServer = () => {
  const calls: string[] = [];
  return {
    server: {
      close: () => calls.push("close"),
      closeIdleConnections: () => calls.push("closeIdleConnections"),
    } as unknown as Server,
    calls,
  };
};

const req = {} as IncomingMessage;
/** Whether `p` has settled by the time the queued reactions have run. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  return settled;
}

describe("Drain.close", () => {
  it("settles only once the last of the requests in flight is answered", async () => {
    const drain = new Drain();
    const listener = drain.admit(() => {});
    const [a, b] = [new FakeResponse(), new FakeResponse()];
    listener(req, a as unknown as ServerResponse);
    listener(req, b as unknown as ServerResponse);
    const { server, calls } = fakeServer();
    const closed = drain.close(server);
    expect(calls).toContain("close");
    expect(await settledYet(closed)).toBe(false);
    a.end("a");
    expect(drain.inFlight).toBe(1);
    expect(await settledYet(closed)).toBe(false);
    b.end("b");
    expect(await settledYet(closed)).toBe(true);
  });

  it("is not settled by a request answered before it began", async () => {
    const drain = new Drain();
    const listener = drain.admit(() => {});
    const [early, late] = [new FakeResponse(), new FakeResponse()];
    listener(req, early as unknown as ServerResponse);
    listener(req, late as unknown as ServerResponse);
    // Answered while not draining: close has not been asked yet, and one is still in flight.
    early.end();
    const closed = drain.close(fakeServer().server);
    expect(await settledYet(closed)).toBe(false);
    late.end();
    await closed;
  });

  it("answers a request admitted after it 503 in JSON with Connection: close, without calling the function", () => {
    const drain = new Drain();
    const called: IncomingMessage[] = [];
    const listener = drain.admit((r) => void called.push(r));
    void drain.close(fakeServer().server);
    const res = new FakeResponse();
    listener(req, res as unknown as ServerResponse);
    expect(called).toEqual([]);
    expect(res.status).toBe(503);
    const body = res.body!;
    expect(JSON.parse(body)).toEqual({ error: "this function instance is shutting down: send the event again" });
    expect(res.headers).toEqual({
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    expect(drain.inFlight).toBe(0);
  });

  it("closes a kept-alive connection that is idle, so its client opens a new one elsewhere", async () => {
    const drain = new Drain();
    const server = createServer(drain.admit((_req, res) => res.end("ok")));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const agent = new Agent({ keepAlive: true });
    try {
      const socket = await new Promise<import("node:net").Socket>((resolve, reject) => {
        const r = request({ host: "127.0.0.1", port, agent, method: "GET", path: "/" }, (res) => {
          res.resume();
          res.on("end", () => resolve(r.socket!));
        });
        r.on("error", reject).end();
      });
      const socketClosed = new Promise<void>((r) => socket.once("close", () => r()));
      await drain.close(server);
      await socketClosed;
      expect(socket.destroyed).toBe(true);
    } finally {
      agent.destroy();
      server.closeAllConnections();
    }
  });
});
