import { CloudEvent as SdkEvent, HTTP } from "cloudevents";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { fromHttp, toStructured, type CloudEvent } from "../shared/cloudevent.ts";
import type { RecordedDelivery } from "../test/fixtures/knative/shape.ts";
import { readEvents, record, replay } from "./replay.ts";

const dir = mkdtempSync(join(tmpdir(), "poolrelay-replay-unit-"));
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const ev = (id: string) => ({
  specversion: "1.0",
  id,
  type: "t",
  source: "/s",
  time: "2026-01-01T00:00:00.000Z",
  data: { n: id },
});

/** Deliveries recorded from the real Knative flow, as the tap streams them. */
const knative = ["apiserversource-dgd-add", "pingsource-tick", "broker-reconcile"].map((name) => {
  const { headers, body } = JSON.parse(
    readFileSync(new URL(`../test/fixtures/knative/${name}.json`, import.meta.url), "utf8"),
  ) as RecordedDelivery;
  const r = fromHttp(headers, Buffer.from(body));
  if (!r.ok) throw new Error(`${name}: ${r.error}`);
  return r.value;
});

/** Read by the SDK's own reader, then held to its strict validation (which is silent on specversion, hence validate()). */
function sdkRead(headers: IncomingHttpHeaders, body: string): SdkEvent<unknown>[] {
  const parsed = HTTP.toEvent({ headers, body });
  return (Array.isArray(parsed) ? parsed : [parsed]).map((e) => {
    const strict = new SdkEvent<unknown>({ ...e }, true);
    expect(strict.validate()).toBe(true);
    return strict;
  });
}

/** The attributes a recording or a replay must keep (the SDK writes time to the millisecond). */
const essence = (e: { id: string; type: string; source: string; subject?: string; time?: string; data?: unknown }) => ({
  id: e.id,
  type: e.type,
  source: e.source,
  subject: e.subject,
  time: e.time === undefined ? undefined : Date.parse(e.time),
  data: e.data,
});

describe("readEvents", () => {
  it("reads JSON Lines, a batch array and a single event", () => {
    expect(
      readEvents(write("a.jsonl", `${JSON.stringify(ev("1"))}\n\n${JSON.stringify(ev("2"))}\n`)).map((e) => e.id),
    ).toEqual(["1", "2"]);
    expect(readEvents(write("b.json", JSON.stringify([ev("3"), ev("4")]))).map((e) => e.id)).toEqual(["3", "4"]);
    expect(readEvents(write("c.json", JSON.stringify(ev("5")))).map((e) => e.id)).toEqual(["5"]);
  });

  it("reads every CloudEvents conformance batch", () => {
    const fixture = JSON.parse(
      readFileSync(new URL("../test/fixtures/cloudevents/valid-batches.json", import.meta.url), "utf8"),
    ) as { tests: { id: string; batch: unknown[] }[] };
    // Each batch's size written out: an empty or truncated fixture, or a reader that drops events, fails.
    expect(
      fixture.tests.map((test) => [test.id, readEvents(write(`${test.id}.json`, JSON.stringify(test.batch))).length]),
    ).toEqual([
      ["validBatchEmpty", 0],
      ["validBatchMinimal", 1],
      ["validBatchMinimal2", 2],
      ["validBatchMinimalAndAllCore", 2],
      ["validBatchMinimalAndAllExtensionTypes", 2],
    ]);
  });

  it.each([
    {
      name: "a line that is no JSON",
      file: "j.jsonl",
      text: `${JSON.stringify(ev("1"))}\n{"id": \n`,
      error: /^\S*j\.jsonl:2: invalid JSON: /,
    },
    {
      name: "an event without source",
      file: "s.jsonl",
      text: `${JSON.stringify(ev("1"))}\n${JSON.stringify({ specversion: "1.0", id: "2", type: "t" })}\n`,
      error: /^\S*s\.jsonl:2: invalid CloudEvent "2": source is required$/,
    },
    {
      name: "a source the SDK refuses",
      file: "u.jsonl",
      text: JSON.stringify({ ...ev("1"), source: "not a uri" }),
      error: /^\S*u\.jsonl:1: invalid CloudEvent "1": source must match format "uri-reference", got "not a uri"$/,
    },
    {
      name: "a batch that is no JSON",
      file: "b.json",
      text: `[\n${JSON.stringify(ev("1"))},\n{oops}\n]`,
      error: /^\S*b\.json:3: invalid JSON: /,
    },
    {
      name: "a bad time in a batch",
      file: "t.json",
      text: JSON.stringify([ev("1"), { ...ev("2"), time: "noon" }]),
      error: /^\S*t\.json\[1\]: invalid CloudEvent "2": time must be an RFC 3339 timestamp, got "noon"$/,
    },
  ])("names the file, line or index, event and attribute of $name", ({ file, text, error }) => {
    expect(() => readEvents(write(file, text))).toThrow(error);
  });

  it("reports every problem at once, the first twenty of them", () => {
    const bad = (n: number) =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ ...ev(`e${i}`), type: "" })).join("\n");
    expect(() => readEvents(write("three.jsonl", bad(3)))).toThrow(
      /three\.jsonl:1: .*\n.*three\.jsonl:2: .*\n.*three\.jsonl:3: invalid CloudEvent "e2": type must not be empty$/,
    );
    expect(() => readEvents(write("many.jsonl", bad(25)))).toThrow(/many\.jsonl:20: .*\n\.\.\. and 5 more$/);
  });

  it("names a folder without recordings, and a file it cannot read", () => {
    mkdirSync(join(dir, "empty"));
    expect(() => readEvents(join(dir, "empty"))).toThrow(/empty: no \.jsonl or \.json file in this folder/);
    mkdirSync(join(dir, "odd", "x.jsonl"), { recursive: true });
    expect(() => readEvents(join(dir, "odd"))).toThrow(/odd\/x\.jsonl: cannot read: EISDIR/);
  });
});

/** A target that collects what it is sent and answers as `answer` says. */
async function target(answer: (event: CloudEvent | undefined, res: ServerResponse) => void) {
  const got: { headers: IncomingHttpHeaders; body: string; event: CloudEvent | undefined }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const r = fromHttp(req.headers, body);
      got.push({ headers: req.headers, body: body.toString(), event: r.ok ? r.value : undefined });
      answer(r.ok ? r.value : undefined, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    got,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    close: () => new Promise((r) => server.close(r)),
  };
}

let now = 0;

describe("replay", () => {
  it("sends each event in the chosen mode, paced by --rate, and counts refusals", async () => {
    const t = await target((event, res) => {
      now += 10;
      res.writeHead(event && event.id !== "3" ? 202 : 400).end();
    });
    const events = readEvents(write("r.jsonl", ["1", "2", "3"].map((i) => JSON.stringify(ev(i))).join("\n")));
    // A virtual clock: each answer takes 10 ms of it; pacing at 20/s sleeps what is left of each 50 ms.
    now = 0;
    const sleeps: number[] = [];
    const clock = { now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms)) };
    const binary = await replay(events, { to: t.url, mode: "binary", rate: 20 }, () => {}, clock);
    expect(binary).toEqual({ sent: 3, failed: 1 });
    expect(sleeps).toEqual([40, 40]);
    expect(t.got.map((g) => g.event?.id)).toEqual(["1", "2", "3"]);
    expect(t.got[0]!.headers["content-type"]).toMatch(/^application\/json/);
    t.got.length = 0;
    await replay(events.slice(0, 1), { to: t.url, mode: "structured", rate: 0 }, () => {});
    expect(t.got[0]!.headers["content-type"]).toMatch(/^application\/cloudevents\+json/);
    expect(t.got[0]!.event).toEqual(events[0]);
    await t.close();
  });

  it("sends what the CloudEvents SDK makes, in both modes: the SDK and the functions' parser read back the same events", async () => {
    const t = await target((_, res) => res.writeHead(202).end());
    for (const mode of ["binary", "structured"] as const) {
      t.got.length = 0;
      expect(await replay(knative, { to: t.url, mode, rate: 0 }, () => {})).toEqual({ sent: 3, failed: 0 });
      // Exactly the SDK's own message for each event, header for header and byte for byte.
      const made = knative.map(({ extensions, ...attributes }) =>
        (mode === "binary" ? HTTP.binary : HTTP.structured)(
          new SdkEvent<unknown>({ ...extensions, ...attributes }, true),
        ),
      );
      t.got.forEach((g, i) => {
        const { headers, body } = made[i]!;
        expect(Object.fromEntries(Object.keys(headers).map((k) => [k, g.headers[k]])), `${mode} ${i}`).toEqual(headers);
        expect(g.body, `${mode} ${i}`).toBe(body);
      });
      expect(
        t.got.map((g) => essence(sdkRead(g.headers, g.body)[0]!)),
        mode,
      ).toEqual(knative.map(essence));
      expect(
        t.got.map((g) => essence(g.event!)),
        mode,
      ).toEqual(knative.map(essence));
      // binary mode carries the ce-* headers the SDK writes, as `ce-id` for the id.
      if (mode === "binary") expect(t.got.map((g) => g.headers["ce-id"])).toEqual(knative.map((e) => e.id));
    }
    await t.close();
  });

  it("sends data as the receiver reads it, in both modes: a JSON string (quoted, where the SDK alone would not), text, a number", async () => {
    const t = await target((_, res) => res.writeHead(202).end());
    const events = readEvents(
      write(
        "data.jsonl",
        [
          { ...ev("json-string"), data: "a string" },
          { ...ev("text"), datacontenttype: "text/plain", data: "Simple text" },
          { ...ev("number"), data: 5 },
        ]
          .map((e) => JSON.stringify(e))
          .join("\n"),
      ),
    );
    for (const mode of ["binary", "structured"] as const) {
      t.got.length = 0;
      expect(await replay(events, { to: t.url, mode, rate: 0 }, () => {})).toEqual({ sent: 3, failed: 0 });
      expect(
        t.got.map((g) => g.event?.data),
        mode,
      ).toEqual(["a string", "Simple text", 5]);
    }
    await t.close();
  });

  it("says what a refusing target answered, and why an unreachable one failed", async () => {
    const t = await target((_, res) =>
      res
        .writeHead(422, { "content-type": "application/json" })
        .end(JSON.stringify({ error: "the data of t event 1 is invalid: namespace: must be a namespace name" })),
    );
    const errors: string[] = [];
    expect(await replay([knative[0]!], { to: t.url, mode: "binary", rate: 0 }, (s) => errors.push(s))).toEqual({
      sent: 1,
      failed: 1,
    });
    expect(errors).toEqual([
      `poolrelay: dev.knative.apiserver.resource.add ${knative[0]!.id}: ${t.url} answered 422: the data of t event 1 is invalid: namespace: must be a namespace name\n`,
    ]);
    await t.close();
    errors.length = 0;
    await replay([knative[0]!], { to: t.url, mode: "binary", rate: 0 }, (s) => errors.push(s));
    expect(errors[0]).toMatch(/: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)\n$/);
  });
});

/** A Broker tap as dev/tap.ts serves one: structured events as JSON Lines on GET, here split mid-line. */
async function tap(lines: string[], { end }: { end: boolean }) {
  const server = createServer((_, res) => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    const text = lines.map((l) => `${l}\n`).join("");
    const half = Math.floor(text.length / 2);
    res.write(text.slice(0, half));
    // A pause, so the reader gets the first half on its own, a line cut in two.
    setTimeout(() => {
      res.write(text.slice(half));
      if (end) res.end();
    }, 20);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/events`,
    close: () => new Promise((r) => (server.close(r), server.closeAllConnections())),
  };
}

const tapLines = [
  ...knative.map((e) => JSON.stringify(toStructured(e))),
  "",
  JSON.stringify({ specversion: "1.0", id: "nosource", type: "t" }),
];

describe("record", () => {
  it("writes JSON Lines the SDK reads back strictly, leaves out and names an invalid line, and replay reads the file", async () => {
    const t = await tap(tapLines, { end: true });
    const file = join(dir, "rec.jsonl");
    const errors: string[] = [];
    expect(await record(t.url, file, new AbortController().signal, (s) => errors.push(s))).toBe(3);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines.map((l) => essence(sdkRead({ "content-type": "application/cloudevents+json" }, l)[0]!))).toEqual(
      knative.map(essence),
    );
    expect(readEvents(file).map(essence)).toEqual(knative.map(essence));
    expect(errors.filter((e) => !e.startsWith("\r"))).toEqual([
      `\npoolrelay: ${t.url} line 5: invalid CloudEvent "nosource": source is required; not recorded\n`,
    ]);
    expect(errors.filter((e) => e.startsWith("\r")).at(-1)).toBe("\rpoolrelay: 3 events recorded");
    await t.close();
  });

  it("writes one batch array with -o json, closed when the recording is stopped, that the SDK reads as a batch", async () => {
    const t = await tap(tapLines.slice(0, 2), { end: false });
    const file = join(dir, "rec.json");
    const stop = new AbortController();
    // Stopped once both events are written, as Ctrl-C would.
    const n = await record(
      t.url,
      file,
      stop.signal,
      (s) => s === "\rpoolrelay: 2 events recorded" && stop.abort(),
      "json",
    );
    expect(n).toBe(2);
    const text = readFileSync(file, "utf8");
    expect(sdkRead({ "content-type": "application/cloudevents-batch+json" }, text).map(essence)).toEqual(
      knative.slice(0, 2).map(essence),
    );
    expect(readEvents(file).map(essence)).toEqual(knative.slice(0, 2).map(essence));
    await t.close();
  });

  it("writes to a stream (stdout) without a progress line", async () => {
    const t = await tap(tapLines.slice(0, 1), { end: true });
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (c: Buffer) => chunks.push(c.toString()));
    const errors: string[] = [];
    expect(await record(t.url, out, new AbortController().signal, (s) => errors.push(s))).toBe(1);
    expect(errors).toEqual([]);
    expect(essence(sdkRead({ "content-type": "application/cloudevents+json" }, chunks.join(""))[0]!)).toEqual(
      essence(knative[0]!),
    );
    await t.close();
  });

  it("names a tap it cannot read, and leaves the file alone", async () => {
    const t = await tap([], { end: true });
    await t.close();
    const file = join(dir, "never.jsonl");
    await expect(record(t.url, file, new AbortController().signal, () => {})).rejects.toThrow(
      /^cannot read the tap http:\/\/127\.0\.0\.1:\d+\/events: fetch failed \(connect ECONNREFUSED/,
    );
    expect(existsSync(file)).toBe(false);
  });
});
