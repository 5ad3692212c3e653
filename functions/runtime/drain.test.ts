// Which signal does what (stopOnSignals); the whole stop of a real process as PID 1 is pid1.test.ts.
import { createServer } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { Drain, stopOnSignals, type Signals } from "./drain.ts";

function fakeProcess() {
  const listeners = new Map<string, () => void>();
  const exits: number[] = [];
  const proc: Signals = {
    on: (signal, listener) => listeners.set(signal, listener),
    exit: (code) => void exits.push(code) as never,
  };
  const send = (signal: string) => listeners.get(signal)!();
  return { proc, exits, send };
}

describe("stopOnSignals", () => {
  it("exits 0 once a SIGTERM's drain has finished, and not before", async () => {
    const server = createServer();
    const drain = new Drain();
    let finish: (() => void) | undefined;
    drain.close = () => new Promise<void>((resolve) => (finish = resolve));
    const { proc, exits, send } = fakeProcess();
    stopOnSignals(server, drain, proc);
    send("SIGTERM");
    await Promise.resolve();
    expect(finish).toBeTypeOf("function");
    expect(exits).toEqual([]);
    finish!();
    await expect.poll(() => exits).toEqual([0]);
  });

  it("exits 143 at once on a second SIGTERM, while the first still drains", () => {
    const drain = new Drain();
    drain.close = () => new Promise<void>(() => {});
    const { proc, exits, send } = fakeProcess();
    stopOnSignals(createServer(), drain, proc);
    send("SIGTERM");
    expect(exits).toEqual([]);
    send("SIGTERM");
    expect(exits).toEqual([143]);
  });

  it("exits 130 at once on SIGINT", () => {
    const { proc, exits, send } = fakeProcess();
    stopOnSignals(createServer(), new Drain(), proc);
    send("SIGINT");
    expect(exits).toEqual([130]);
  });
});

describe("Drain", () => {
  it("refuses a request that arrives on an open connection after close, without calling the function", async () => {
    const drain = new Drain();
    const called: string[] = [];
    let answerHeld: (() => void) | undefined;
    const server = createServer(
      drain.admit((req, res) => {
        called.push(req.url!);
        answerHeld = () => res.writeHead(200).end("held");
      }),
    );
    // Every request that reaches the server, refused or not.
    let reached = 0;
    server.on("request", () => reached++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (c: Buffer) => (received += c.toString("latin1")));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write("POST /held HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    await expect.poll(() => called).toEqual(["/held"]);
    const drained = drain.close(server);
    // The connection is busy, so still open: the next request on it comes after close (Node
    // dispatches a pipelined request at once, also after close).
    socket.write("POST /after HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    await expect.poll(() => reached).toBe(2);
    expect(drain.inFlight).toBe(1);
    answerHeld!();
    await drained;
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // The held answer's own headers, not the refusal's that may follow it.
    expect(received.slice(0, received.indexOf("\r\n\r\n") + 2)).toMatch(/\r\nConnection: close\r\n/i);
    expect(called).toEqual(["/held"]);
    expect(received.match(/HTTP\/1\.1 2\d\d /g)).toHaveLength(1);
  });

  it("resolves close at once when nothing is in flight, and the server takes no new connection", async () => {
    const drain = new Drain();
    const server = createServer(drain.admit((_req, res) => res.end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await drain.close(server);
    const refused = await new Promise<string>((resolve) =>
      connect(port, "127.0.0.1")
        .once("error", (err: NodeJS.ErrnoException) => resolve(err.code!))
        .once("connect", () => resolve("connected")),
    );
    expect(refused).toBe("ECONNREFUSED");
  });
});
