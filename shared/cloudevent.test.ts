import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fromHttp, fromStructured, toBinary, toStructured, type CloudEvent } from "./cloudevent.ts";

const fixtures = new URL("../test/fixtures/cloudevents/", import.meta.url);
const valid = JSON.parse(readFileSync(new URL("valid-events.json", fixtures), "utf8")).tests as { id: string; event: Record<string, unknown> }[];
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe("fromStructured", () => {
  // it.each over an empty list would pass with no case run.
  it("has every valid-event conformance vector to run", () => {
    expect(valid.map((v) => v.id)).toEqual([
      "validMinimal", "validMinimalWithNullForOptional", "validAllCoreAttributes", "validMinimalWithTimeUtc", "validMinimalWithTimeToNanosecondsUtc",
      "validMinimalWithTimeUsingPositiveOffset", "validMinimalWithTimeUsingNegativeOffset", "validRelativeSource", "validSimpleTextData", "validAllExtensionTypes",
    ]);
  });

  it.each(valid)("accepts the conformance vector $id", ({ event }) => {
    const r = fromStructured(event);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value).toMatchObject({ id: event["id"], type: event["type"], source: event["source"] });
  });

  it.each([
    { name: "a missing id", event: { specversion: "1.0", type: "t", source: "s" }, error: /id is required/ },
    { name: "an empty id", event: { specversion: "1.0", id: "", type: "t", source: "s" }, error: /id must not be empty/ },
    { name: "a numeric id", event: { specversion: "1.0", id: 1, type: "t", source: "s" }, error: /id is required/ },
    { name: "a missing type", event: { specversion: "1.0", id: "1", source: "s" }, error: /type is required/ },
    { name: "an empty source", event: { specversion: "1.0", id: "1", type: "t", source: "" }, error: /source must not be empty/ },
    { name: "specversion 0.3", event: { specversion: "0.3", id: "1", type: "t", source: "s" }, error: /specversion must be "1\.0", got "0\.3"/ },
    { name: "a missing specversion", event: { id: "1", type: "t", source: "s" }, error: /specversion must be "1\.0"/ },
    { name: "a time without zone", event: { specversion: "1.0", id: "1", type: "t", source: "s", time: "2018-04-05T17:31:00" }, error: /time must be an RFC 3339 timestamp, got "2018-04-05T17:31:00"/ },
    { name: "a time offset +25:00", event: { specversion: "1.0", id: "1", type: "t", source: "s", time: "2018-04-05T17:31:00+25:00" }, error: /time must be a valid date/ },
    { name: "an empty subject", event: { specversion: "1.0", id: "1", type: "t", source: "s", subject: "" }, error: /subject must not be empty/ },
    { name: "an upper-case extension name", event: { specversion: "1.0", id: "1", type: "t", source: "s", myExt: "x" }, error: /extension names must be lower-case letters and digits, got myExt/ },
    { name: "data and data_base64 together", event: { specversion: "1.0", id: "1", type: "t", source: "s", data: {}, data_base64: "AA==" }, error: /mutually exclusive/ },
    { name: "a JSON array", event: [], error: /must be a JSON object/ },
  ])("rejects $name", ({ event, error }) => {
    const r = fromStructured(event);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(error);
  });

  it("names the event by its id when it has one, and every attribute at fault", () => {
    expect(fromStructured({ specversion: "0.9", id: "e-7", type: "t" })).toEqual({ ok: false, error: 'invalid CloudEvent "e-7": specversion must be "1.0", got "0.9"; source is required' });
    expect(fromStructured({ specversion: "1.0", type: "t", source: "s" })).toEqual({ ok: false, error: "invalid CloudEvent: id is required" });
  });

  it("decodes data_base64", () => {
    const r = fromStructured({ specversion: "1.0", id: "1", type: "t", source: "s", data_base64: "TWE=" });
    expect(r.ok && Buffer.isBuffer(r.value.data) && r.value.data.toString()).toBe("Ma");
  });
});

describe("fromHttp", () => {
  const event: CloudEvent = { specversion: "1.0", id: "e1", type: "t", source: "/s", subject: "a/b", time: "2026-01-01T00:00:00Z", datacontenttype: "application/json", extensions: { kind: "Service" }, data: { a: 1 } };

  it("round-trips binary mode", () => {
    const { headers, body } = toBinary(event);
    expect(fromHttp(headers, Buffer.from(body))).toEqual({ ok: true, value: event });
  });

  it("round-trips structured mode, with or without charset", () => {
    for (const ct of ["application/cloudevents+json", "application/cloudevents+json; charset=UTF-8"]) {
      expect(fromHttp({ "content-type": ct }, json(toStructured(event)))).toEqual({ ok: true, value: event });
    }
  });

  it("parses JSON data under application/json;charset=utf-8 (the SDK leaves it a string)", () => {
    const { headers, body } = toBinary(event);
    const r = fromHttp({ ...headers, "content-type": "application/json;charset=utf-8" }, Buffer.from(body));
    expect(r.ok && r.value.data).toEqual({ a: 1 });
  });

  it("takes a batch holding exactly one event as that event", () => {
    const r = fromHttp({ "content-type": "application/cloudevents-batch+json; charset=utf-8" }, json([toStructured(event)]));
    expect(r).toEqual({ ok: true, value: event });
  });

  it("keeps non-JSON data as text", () => {
    const r = fromHttp({ "ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "s", "content-type": "text/plain" }, Buffer.from("hello"));
    expect(r.ok && r.value.data).toBe("hello");
  });

  it.each([
    { name: "no CloudEvent at all", headers: { "content-type": "application/json" }, body: "{}", error: /not a CloudEvent/ },
    { name: "a binary event without id", headers: { "ce-specversion": "1.0", "ce-type": "t", "ce-source": "s" }, body: "", error: /id is required/ },
    { name: "an empty batch", headers: { "content-type": "application/cloudevents-batch+json" }, body: "[]", error: /batched CloudEvents are not accepted: a function handles one event per request, and this batch holds 0/ },
    { name: "a batch of two", headers: { "content-type": "application/cloudevents-batch+json" }, body: JSON.stringify([toStructured(event), toStructured(event)]), error: /a function handles one event per request, and this batch holds 2/ },
    { name: "a batch that is no array", headers: { "content-type": "application/cloudevents-batch+json" }, body: JSON.stringify(toStructured(event)), error: /a CloudEvents batch must be a JSON array/ },
    { name: "a batch of one invalid event", headers: { "content-type": "application/cloudevents-batch+json" }, body: JSON.stringify([{ ...toStructured(event), time: "noon" }]), error: /^batch\[0\]: invalid CloudEvent "e1": time must be an RFC 3339 timestamp, got "noon"$/ },
    { name: "broken structured JSON", headers: { "content-type": "application/cloudevents+json" }, body: "{", error: /not valid JSON/ },
  ])("rejects $name", ({ headers, body, error }) => {
    const r = fromHttp(headers, Buffer.from(body));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(error);
  });
});
