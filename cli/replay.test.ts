import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fromHttp, type CloudEvent } from "../shared/cloudevent.ts";
import { readEvents, replay } from "./replay.ts";

const dir = mkdtempSync(join(tmpdir(), "poolrelay-replay-unit-"));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const ev = (id: string) => ({ specversion: "1.0", id, type: "t", source: "/s", data: { n: id } });

describe("readEvents", () => {
  it("reads JSON Lines, a batch array and a single event", () => {
    expect(readEvents(write("a.jsonl", `${JSON.stringify(ev("1"))}\n\n${JSON.stringify(ev("2"))}\n`)).map((e) => e.id)).toEqual(["1", "2"]);
    expect(readEvents(write("b.json", JSON.stringify([ev("3"), ev("4")]))).map((e) => e.id)).toEqual(["3", "4"]);
    expect(readEvents(write("c.json", JSON.stringify(ev("5")))).map((e) => e.id)).toEqual(["5"]);
  });

  it("names the file and line of an invalid event", () => {
    const path = write("bad.jsonl", `${JSON.stringify(ev("1"))}\n${JSON.stringify({ specversion: "1.0", id: "2", type: "t" })}\n`);
    expect(() => readEvents(path)).toThrow(/bad\.jsonl:2: invalid CloudEvent: source is required/);
  });

  it("reads every CloudEvents conformance batch", () => {
    const fixture = JSON.parse(readFileSync(new URL("../test/fixtures/cloudevents/valid-batches.json", import.meta.url), "utf8")) as { tests: { id: string; batch: unknown[] }[] };
    for (const test of fixture.tests) {
      expect(readEvents(write(`${test.id}.json`, JSON.stringify(test.batch))), test.id).toHaveLength(test.batch.length);
    }
  });
});

let now = 0;

describe("replay", () => {
  it("sends each event in the chosen mode, paced by --rate, and counts refusals", async () => {
    const got: { ct: string | undefined; event: CloudEvent }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const r = fromHttp(req.headers, Buffer.concat(chunks));
        if (r.ok) got.push({ ct: req.headers["content-type"], event: r.value });
        now += 10;
        res.writeHead(r.ok && r.value.id !== "3" ? 202 : 400).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const to = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const events = readEvents(write("r.jsonl", ["1", "2", "3"].map((i) => JSON.stringify(ev(i))).join("\n")));
    // A virtual clock: each answer takes 10 ms of it; pacing at 20/s sleeps what is left of each 50 ms.
    now = 0;
    const sleeps: number[] = [];
    const clock = { now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms)) };
    const binary = await replay(events, { to, mode: "binary", rate: 20 }, () => {}, clock);
    expect(binary).toEqual({ sent: 3, failed: 1 });
    expect(sleeps).toEqual([40, 40]);
    expect(got.map((g) => g.event.id)).toEqual(["1", "2", "3"]);
    expect(got[0]!.ct).toMatch(/^application\/json/);
    got.length = 0;
    await replay(events.slice(0, 1), { to, mode: "structured", rate: 0 }, () => {});
    expect(got[0]!.ct).toMatch(/^application\/cloudevents\+json/);
    expect(got[0]!.event).toEqual(events[0]);
    server.close();
  });
});
