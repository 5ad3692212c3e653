import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fromHttp, fromStructured, toBinary, toStructured, type CloudEvent } from "./cloudevent.ts";

const fixtures = new URL("../test/fixtures/cloudevents/", import.meta.url);
const { tests: valid } = JSON.parse(readFileSync(new URL("valid-events.json", fixtures), "utf8")) as {
  tests: { id: string; event: Record<string, unknown> }[];
};
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe("fromStructured", () => {
  // it.each over an empty list would pass with no case run.
  it("has every valid-event conformance vector to run", () => {
    expect(valid.map((v) => v.id)).toEqual([
      "validMinimal",
      "validMinimalWithNullForOptional",
      "validAllCoreAttributes",
      "validMinimalWithTimeUtc",
      "validMinimalWithTimeToNanosecondsUtc",
      "validMinimalWithTimeUsingPositiveOffset",
      "validMinimalWithTimeUsingNegativeOffset",
      "validRelativeSource",
      "validSimpleTextData",
      "validAllExtensionTypes",
    ]);
  });

  it.each(valid)("accepts the conformance vector $id", ({ event }) => {
    const r = fromStructured(event);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value).toMatchObject({ id: event["id"], type: event["type"], source: event["source"] });
  });

  it.each([
    { name: "a missing id", event: { specversion: "1.0", type: "t", source: "s" }, error: /id is required/ },
    {
      name: "an empty id",
      event: { specversion: "1.0", id: "", type: "t", source: "s" },
      error: /id must not be empty/,
    },
    { name: "a numeric id", event: { specversion: "1.0", id: 1, type: "t", source: "s" }, error: /id is required/ },
    { name: "a missing type", event: { specversion: "1.0", id: "1", source: "s" }, error: /type is required/ },
    {
      name: "an empty source",
      event: { specversion: "1.0", id: "1", type: "t", source: "" },
      error: /source must not be empty/,
    },
    {
      name: "specversion 0.3",
      event: { specversion: "0.3", id: "1", type: "t", source: "s" },
      error: /specversion must be "1\.0", got "0\.3"/,
    },
    { name: "a missing specversion", event: { id: "1", type: "t", source: "s" }, error: /specversion must be "1\.0"/ },
    {
      name: "a time without zone",
      event: { specversion: "1.0", id: "1", type: "t", source: "s", time: "2018-04-05T17:31:00" },
      error: /time must be an RFC 3339 timestamp, got "2018-04-05T17:31:00"/,
    },
    {
      name: "a time offset +25:00",
      event: { specversion: "1.0", id: "1", type: "t", source: "s", time: "2018-04-05T17:31:00+25:00" },
      error: /time must be a valid date/,
    },
    {
      name: "an empty subject",
      event: { specversion: "1.0", id: "1", type: "t", source: "s", subject: "" },
      error: /subject must not be empty/,
    },
    {
      name: "an upper-case extension name",
      event: { specversion: "1.0", id: "1", type: "t", source: "s", myExt: "x" },
      error: /extension names must be lower-case letters and digits, got myExt/,
    },
    {
      name: "data and data_base64 together",
      event: { specversion: "1.0", id: "1", type: "t", source: "s", data: {}, data_base64: "AA==" },
      error: /mutually exclusive/,
    },
    { name: "a JSON array", event: [], error: /must be a JSON object/ },
  ])("rejects $name", ({ event, error }) => {
    const r = fromStructured(event);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(error);
  });

  it("names the event by its id when it has one, and every attribute at fault", () => {
    expect(fromStructured({ specversion: "0.9", id: "e-7", type: "t" })).toEqual({
      ok: false,
      error: 'invalid CloudEvent "e-7": specversion must be "1.0", got "0.9"; source is required',
    });
    expect(fromStructured({ specversion: "1.0", type: "t", source: "s" })).toEqual({
      ok: false,
      error: "invalid CloudEvent: id is required",
    });
  });

  it("names an event with an empty id as an unnamed one", () => {
    expect(fromStructured({ specversion: "1.0", id: "", type: "t", source: "s" })).toEqual({
      ok: false,
      error: "invalid CloudEvent: id must not be empty",
    });
  });

  it("lists every extension name at fault", () => {
    expect(
      fromStructured({ specversion: "1.0", id: "e-7", type: "t", source: "s", myExt: "x", my_ext: "y", ok1: "z" }),
    ).toEqual({
      ok: false,
      error: 'invalid CloudEvent "e-7": extension names must be lower-case letters and digits, got myExt, my_ext',
    });
  });

  it.each([
    { name: "null", event: null },
    { name: "a string", event: "an event" },
    { name: "a number", event: 7 },
  ])("refuses $name as no JSON object", ({ event }) => {
    expect(fromStructured(event)).toEqual({ ok: false, error: "a structured CloudEvent must be a JSON object" });
  });

  it("takes the optional attributes it is given, and adds none it is not", () => {
    expect(fromStructured({ specversion: "1.0", id: "1", type: "t", source: "s" })).toStrictEqual({
      ok: true,
      value: { specversion: "1.0", id: "1", type: "t", source: "s", extensions: {}, data: undefined },
    });
    expect(
      fromStructured({
        specversion: "1.0",
        id: "1",
        type: "t",
        source: "s",
        subject: "n/g",
        time: "2026-01-01T00:00:00Z",
        datacontenttype: "application/json",
        dataschema: "https://example.com/s.json",
        data: { a: 1 },
      }),
    ).toStrictEqual({
      ok: true,
      value: {
        specversion: "1.0",
        id: "1",
        type: "t",
        source: "s",
        subject: "n/g",
        time: "2026-01-01T00:00:00Z",
        datacontenttype: "application/json",
        dataschema: "https://example.com/s.json",
        extensions: {},
        data: { a: 1 },
      },
    });
  });

  it("takes data or data_base64 when the other is null (a null attribute is an absent one)", () => {
    const base = { specversion: "1.0", id: "1", type: "t", source: "s" };
    const fromBase64 = fromStructured({ ...base, data: null, data_base64: "TWE=" });
    expect(fromBase64.ok && Buffer.isBuffer(fromBase64.value.data) && fromBase64.value.data.toString()).toBe("Ma");
    expect(fromStructured({ ...base, data: { a: 1 }, data_base64: null })).toEqual({
      ok: true,
      value: { ...base, extensions: {}, data: { a: 1 } },
    });
  });

  it("decodes data_base64", () => {
    const r = fromStructured({ specversion: "1.0", id: "1", type: "t", source: "s", data_base64: "TWE=" });
    expect(r.ok && Buffer.isBuffer(r.value.data) && r.value.data.toString()).toBe("Ma");
  });
});

describe("fromHttp", () => {
  const event: CloudEvent = {
    specversion: "1.0",
    id: "e1",
    type: "t",
    source: "/s",
    subject: "a/b",
    time: "2026-01-01T00:00:00Z",
    datacontenttype: "application/json",
    extensions: { kind: "Service" },
    data: { a: 1 },
  };

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
    const r = fromHttp(
      { "content-type": "application/cloudevents-batch+json; charset=utf-8" },
      json([toStructured(event)]),
    );
    expect(r).toEqual({ ok: true, value: event });
  });

  it("keeps non-JSON data as text", () => {
    const r = fromHttp(
      { "ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "s", "content-type": "text/plain" },
      Buffer.from("hello"),
    );
    expect(r.ok && r.value.data).toBe("hello");
  });

  it.each([
    { name: "application/json with parameters", contentType: "application/json;charset=utf-8" },
    { name: "a media type in capitals", contentType: "Application/JSON" },
    { name: "whitespace before the parameters", contentType: "application/json ; charset=utf-8" },
    { name: "a +json suffix", contentType: "application/vnd.example+json" },
    { name: "text/json", contentType: "text/json" },
  ])("parses the data as JSON under $name", ({ contentType }) => {
    const r = fromHttp(
      { "ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "s", "content-type": contentType },
      Buffer.from('{"a":1}'),
    );
    expect(r).toStrictEqual({
      ok: true,
      value: {
        specversion: "1.0",
        id: "1",
        type: "t",
        source: "s",
        datacontenttype: contentType,
        extensions: {},
        data: { a: 1 },
      },
    });
  });

  it("parses the data as JSON when there is no Content-Type, and adds no datacontenttype", () => {
    const r = fromHttp(
      { "ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "s" },
      Buffer.from('{"a":1}'),
    );
    expect(r).toStrictEqual({
      ok: true,
      value: { specversion: "1.0", id: "1", type: "t", source: "s", extensions: {}, data: { a: 1 } },
    });
  });

  it("keeps data under a media type that only starts like JSON as text", () => {
    const r = fromHttp(
      {
        "ce-specversion": "1.0",
        "ce-id": "1",
        "ce-type": "t",
        "ce-source": "s",
        "content-type": "application/json-seq",
      },
      Buffer.from('{"a":1}'),
    );
    expect(r.ok && r.value.data).toBe('{"a":1}');
  });

  it("takes datacontenttype from Content-Type only: a ce-datacontenttype header is an extension like any other", () => {
    const headers = {
      "ce-specversion": "1.0",
      "ce-id": "1",
      "ce-type": "t",
      "ce-source": "s",
      "ce-datacontenttype": "text/plain",
    };
    expect(fromHttp({ ...headers, "content-type": "application/json" }, Buffer.from("{}"))).toStrictEqual({
      ok: true,
      value: {
        specversion: "1.0",
        id: "1",
        type: "t",
        source: "s",
        datacontenttype: "application/json",
        extensions: { datacontenttype: "text/plain" },
        data: {},
      },
    });
    expect(fromHttp(headers, Buffer.from("{}"))).toStrictEqual({
      ok: true,
      value: {
        specversion: "1.0",
        id: "1",
        type: "t",
        source: "s",
        extensions: { datacontenttype: "text/plain" },
        data: {},
      },
    });
  });

  it("round-trips the dataschema in binary and structured mode", () => {
    const withSchema: CloudEvent = {
      specversion: "1.0",
      id: "e2",
      type: "t",
      source: "/s",
      dataschema: "https://example.com/s.json",
      extensions: {},
      data: { a: 1 },
    };
    const { headers, body } = toBinary(withSchema);
    expect(fromHttp(headers, Buffer.from(body))).toEqual({
      ok: true,
      value: { ...withSchema, datacontenttype: "application/json" },
    });
    expect(fromHttp({ "content-type": "application/cloudevents+json" }, json(toStructured(withSchema)))).toEqual({
      ok: true,
      value: withSchema,
    });
  });

  it("takes ce-id without ce-specversion as a CloudEvent, and names the missing specversion", () => {
    expect(fromHttp({ "ce-id": "e3", "ce-type": "t", "ce-source": "s" }, Buffer.alloc(0))).toEqual({
      ok: false,
      error: 'invalid CloudEvent "e3": specversion must be "1.0", got undefined',
    });
  });

  it.each([
    {
      name: "no CloudEvent at all",
      headers: { "content-type": "application/json" },
      body: "{}",
      error: /not a CloudEvent/,
    },
    {
      name: "a binary event without id",
      headers: { "ce-specversion": "1.0", "ce-type": "t", "ce-source": "s" },
      body: "",
      error: /id is required/,
    },
    {
      name: "an empty batch",
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: "[]",
      error: /batched CloudEvents are not accepted: a function handles one event per request, and this batch holds 0/,
    },
    {
      name: "a batch of two",
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: JSON.stringify([toStructured(event), toStructured(event)]),
      error: /a function handles one event per request, and this batch holds 2/,
    },
    {
      name: "a batch that is no array",
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: JSON.stringify(toStructured(event)),
      error: /a CloudEvents batch must be a JSON array/,
    },
    {
      name: "a batch of one invalid event",
      headers: { "content-type": "application/cloudevents-batch+json" },
      body: JSON.stringify([{ ...toStructured(event), time: "noon" }]),
      error: /^batch\[0\]: invalid CloudEvent "e1": time must be an RFC 3339 timestamp, got "noon"$/,
    },
    {
      name: "broken structured JSON",
      headers: { "content-type": "application/cloudevents+json" },
      body: "{",
      error: /not valid JSON/,
    },
  ])("rejects $name", ({ headers, body, error }) => {
    const r = fromHttp(headers, Buffer.from(body));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(error);
  });
});

describe("toBinary", () => {
  it("sends the attributes as ce-* headers, JSON data as the body, and application/json by default", () => {
    const event: CloudEvent = {
      specversion: "1.0",
      id: "e1",
      type: "t",
      source: "/s",
      subject: "n/g",
      time: "2026-01-01T00:00:00Z",
      dataschema: "https://example.com/s.json",
      extensions: { traceparent: "tp" },
      data: { a: 1 },
    };
    expect(toBinary(event)).toEqual({
      headers: {
        "ce-specversion": "1.0",
        "ce-id": "e1",
        "ce-type": "t",
        "ce-source": "/s",
        "ce-subject": "n/g",
        "ce-time": "2026-01-01T00:00:00Z",
        "ce-dataschema": "https://example.com/s.json",
        "ce-traceparent": "tp",
        "content-type": "application/json",
      },
      body: '{"a":1}',
    });
  });

  it("sends an empty body for an event without data", () => {
    expect(
      toBinary({
        specversion: "1.0",
        id: "e1",
        type: "t",
        source: "/s",
        datacontenttype: "text/plain",
        extensions: {},
        data: undefined,
      }),
    ).toEqual({
      headers: {
        "ce-specversion": "1.0",
        "ce-id": "e1",
        "ce-type": "t",
        "ce-source": "/s",
        "content-type": "text/plain",
      },
      body: "",
    });
  });
});

describe("toStructured", () => {
  it("puts extensions beside the attributes, and leaves out data when there is none", () => {
    expect(
      toStructured({
        specversion: "1.0",
        id: "e1",
        type: "t",
        source: "/s",
        extensions: { kind: "Service" },
        data: undefined,
      }),
    ).toStrictEqual({ specversion: "1.0", id: "e1", type: "t", source: "/s", kind: "Service" });
    expect(
      toStructured({ specversion: "1.0", id: "e1", type: "t", source: "/s", extensions: {}, data: { a: 1 } }),
    ).toStrictEqual({ specversion: "1.0", id: "e1", type: "t", source: "/s", data: { a: 1 } });
  });
});
