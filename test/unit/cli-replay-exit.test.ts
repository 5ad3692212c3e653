// `poolrelay replay` as a user runs it against a target: the exit status tells whether every event
// was accepted, and a refusal is printed as the target worded it.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

function poolrelay(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["bin/poolrelay.js", ...args], { cwd: root });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** A target that answers each event by its id, and remembers the ids in arrival order. */
async function target(answers: Record<string, { status: number; body: string }>) {
  const received: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    req.resume().on("end", () => {
      const id = String(req.headers["ce-id"]);
      received.push(id);
      const a = answers[id] ?? { status: 202, body: "" };
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const event = (id: string) =>
  JSON.stringify({ specversion: "1.0", id, type: "com.example.t", source: "/test", time: "2026-12-01T00:00:00Z" });
let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

describe("poolrelay replay's exit status", () => {
  it("exits 0 when every event is accepted", async () => {
    const t = await target({});
    close = t.close;
    const file = join(mkdtempSync(join(tmpdir(), "replay-exit-")), "ok.jsonl");
    writeFileSync(file, [event("a"), event("b")].join("\n"));
    const r = await poolrelay(["replay", file, "--to", t.url]);
    expect(t.received).toEqual(["a", "b"]);
    expect(r.stderr).toBe(`poolrelay: 2 of 2 events accepted by ${t.url}\n`);
    expect(r.code).toBe(0);
  });

  it("exits 1 when one is refused, sends the rest, and prints the function's error", async () => {
    const t = await target({
      b: { status: 422, body: JSON.stringify({ error: "data.name: must be a DNS-1123 subdomain" }) },
    });
    close = t.close;
    const file = join(mkdtempSync(join(tmpdir(), "replay-exit-")), "one-bad.jsonl");
    writeFileSync(file, [event("a"), event("b"), event("c")].join("\n"));
    const r = await poolrelay(["replay", file, "--to", t.url]);
    expect(t.received).toEqual(["a", "b", "c"]);
    expect(r.stderr).toContain(`${t.url} answered 422: data.name: must be a DNS-1123 subdomain`);
    expect(r.stderr).toContain(`poolrelay: 2 of 3 events accepted by ${t.url}\n`);
    expect(r.code).toBe(1);
  });
});
