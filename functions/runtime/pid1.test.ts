// The entry point as PID 1, as in the image under a kubelet: in a PID namespace of its own
// (`unshare --pid --fork`, root, no container runtime), where the kernel ignores a signal that has
// no handler. SIGTERM must stop it: idle at once; with an invocation in flight, after answering it;
// and a request that comes after SIGTERM is never answered with a success.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const bundle = fileURLToPath(new URL("../../test/fixtures/held-bundle.mjs", import.meta.url));
// Far longer than a stop takes; only a process that ignores SIGTERM reaches it.
const STOP_BOUND_MS = 10_000;

interface Pid1 {
  unshare: ChildProcess;
  /** The entry point's pid on this host (1 in its own namespace). */
  pid: number;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

async function startAsPid1(): Promise<Pid1> {
  const unshare = spawn(
    "unshare",
    [
      "--pid",
      "--fork",
      "--kill-child",
      "--",
      process.execPath,
      main,
      "--target=held",
      `--source=${bundle}`,
      "--port=0",
    ],
    {
      env: { ...process.env, NODE_ENV: "development" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  started.push(unshare);
  let out = "";
  const exited = new Promise<number | null>((resolve) => unshare.once("exit", (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const take = (c: Buffer) => {
      out += c.toString("utf8");
      const found = /URL: http:\/\/localhost:(\d+)\//.exec(out)?.[1];
      if (found) resolve(Number(found));
    };
    unshare.stdout.on("data", take);
    unshare.stderr.on("data", take);
    void exited.then((code) => reject(new Error(`the entry point exited with ${code} before listening: ${out}`)));
  });
  const [child] = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .map(Number);
  // The premise: the entry point is PID 1 of its namespace (NSpid: <host pid> 1).
  expect(readFileSync(`/proc/${child}/status`, "utf8")).toMatch(new RegExp(`^NSpid:\\s+${child}\\s+1$`, "m"));
  return { unshare, pid: child!, port, output: () => out, exited };
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${STOP_BOUND_MS} ms`)), STOP_BOUND_MS)),
  );
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

function post(port: number, path: string): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", agent: false }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A keep-alive connection that has had one request answered; `again` sends another on it and answers what came back. */
async function keptAlive(port: number): Promise<{ socket: Socket; again: () => Promise<string> }> {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  socket.on("data", (c: Buffer) => (received += c.toString("latin1")));
  const ask = () => socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n`);
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  ask();
  await expect.poll(() => received).toMatch(/^HTTP\/1\.1 204 /);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  // Whatever ends it: the server's answer and its closing the connection, a reset, or a connection closed already.
  const again = async () => {
    received = "";
    if (!socket.destroyed) socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`, () => {});
    await closed;
    return received;
  };
  return { socket, again };
}

describe("the entry point as PID 1", { timeout: 30_000 }, () => {
  it("exits 0 soon after SIGTERM when idle", async () => {
    const p = await startAsPid1();
    process.kill(p.pid, "SIGTERM");
    expect(await within(p.exited, "the idle entry point's exit")).toBe(0);
  });

  it("answers the invocation in flight, refuses what comes after SIGTERM, then exits 0", async () => {
    const p = await startAsPid1();
    const idle = await keptAlive(p.port);
    const held = post(p.port, "/?hold");
    let heldDone = false;
    void held.finally(() => (heldDone = true)).catch(() => {});
    await expect.poll(() => p.output()).toContain("invocation in flight");
    process.kill(p.pid, "SIGTERM");
    await expect.poll(() => p.output()).toContain("SIGTERM seen by the invocation");
    // While the invocation is still in flight (it answers 300 ms after SIGTERM): no new connection
    // is accepted, and the idle one answers no success.
    await expect(post(p.port, "/")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(await idle.again()).not.toMatch(/^HTTP\/1\.1 2/);
    expect(heldDone).toBe(false);
    // The invocation in flight is answered, with the connection closed after it; then the exit.
    const answer = await within(held, "the held invocation's answer");
    expect(answer).toEqual({ status: 200, connection: "close", body: "answered after SIGTERM" });
    expect(await within(p.exited, "the entry point's exit")).toBe(0);
  });
});
