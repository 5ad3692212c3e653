/**
 * CloudEvents 1.0 over HTTP, parsed from the raw request: binary mode (ce-* headers), structured
 * JSON mode, and a batch of one. Strict where the CloudEvents SDK is lenient (measured, see
 * docs/cli.md: it invents an id and a time, and takes a missing source, a bad
 * time and specversion 0.9): each of those is an error naming the attribute, never a silently
 * filled-in default. The functions parse with this, not the SDK, which also keeps the SDK out of
 * their bundles and cold start.
 */
import * as z from "./zod.ts";

export interface CloudEvent {
  specversion: "1.0";
  id: string;
  type: string;
  source: string;
  subject?: string;
  time?: string;
  datacontenttype?: string;
  dataschema?: string;
  /** Extension attributes, as strings (binary mode carries nothing else). */
  extensions: Record<string, string>;
  data: unknown;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const EXTENSION_NAME = /^[a-z0-9]+$/;
const CORE = ["specversion", "id", "type", "source", "subject", "time", "datacontenttype", "dataschema"] as const;

const Attributes = z.object({
  specversion: z.literal("1.0", { error: (issue) => `specversion must be "1.0", got ${JSON.stringify(issue.input)}` }),
  id: z.string({ error: "id is required" }).check(z.minLength(1, "id must not be empty")),
  type: z.string({ error: "type is required" }).check(z.minLength(1, "type must not be empty")),
  source: z.string({ error: "source is required" }).check(z.minLength(1, "source must not be empty")),
  subject: z.optional(z.string().check(z.minLength(1, "subject must not be empty when present"))),
  time: z.optional(
    z.string().check(
      z.regex(RFC3339, {
        abort: true,
        error: (issue) => `time must be an RFC 3339 timestamp, got ${JSON.stringify(issue.input)}`,
      }),
      z.refine((t) => !Number.isNaN(Date.parse(t)), "time must be a valid date"),
    ),
  ),
  datacontenttype: z.optional(z.string().check(z.minLength(1, "datacontenttype must not be empty when present"))),
  dataschema: z.optional(z.string().check(z.minLength(1, "dataschema must not be empty when present"))),
});

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const media = contentType.split(";")[0]!.trim().toLowerCase();
  return media === "application/json" || media.endsWith("+json") || media === "text/json";
}

function validate(
  attrs: Record<string, unknown>,
  extensions: Record<string, string>,
  data: unknown,
): Parsed<CloudEvent> {
  // The id, when there is one, names the event among many (a recording, a Broker's log).
  const subject =
    typeof attrs["id"] === "string" && attrs["id"] !== ""
      ? `invalid CloudEvent ${JSON.stringify(attrs["id"])}`
      : "invalid CloudEvent";
  const parsed = Attributes.safeParse(attrs);
  if (!parsed.success)
    return { ok: false, error: `${subject}: ${parsed.error.issues.map((i) => i.message).join("; ")}` };
  const bad = Object.keys(extensions).filter((n) => !EXTENSION_NAME.test(n));
  if (bad.length > 0)
    return {
      ok: false,
      error: `${subject}: extension names must be lower-case letters and digits, got ${bad.join(", ")}`,
    };
  const a = parsed.data;
  return {
    ok: true,
    value: {
      specversion: a.specversion,
      id: a.id,
      type: a.type,
      source: a.source,
      ...(a.subject === undefined ? {} : { subject: a.subject }),
      ...(a.time === undefined ? {} : { time: a.time }),
      ...(a.datacontenttype === undefined ? {} : { datacontenttype: a.datacontenttype }),
      ...(a.dataschema === undefined ? {} : { dataschema: a.dataschema }),
      extensions,
      data,
    },
  };
}

function parseBody(body: Buffer, contentType: string | undefined): Parsed<unknown> {
  if (body.length === 0) return { ok: true, value: undefined };
  if (!isJson(contentType)) return { ok: true, value: body.toString("utf8") };
  try {
    return { ok: true, value: JSON.parse(body.toString("utf8")) };
  } catch (err) {
    return { ok: false, error: `the body is not valid JSON: ${(err as Error).message}` };
  }
}

/** A structured-mode event object (also one member of a batch). */
export function fromStructured(obj: unknown): Parsed<CloudEvent> {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj))
    return { ok: false, error: "a structured CloudEvent must be a JSON object" };
  const record = obj as Record<string, unknown>;
  const attrs: Record<string, unknown> = {};
  const extensions: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === "data" || key === "data_base64" || value === null) continue;
    if ((CORE as readonly string[]).includes(key)) attrs[key] = value;
    else extensions[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  if ("data" in record && "data_base64" in record && record["data"] !== null && record["data_base64"] !== null) {
    return { ok: false, error: "invalid CloudEvent: data and data_base64 are mutually exclusive" };
  }
  const data =
    typeof record["data_base64"] === "string" ? Buffer.from(record["data_base64"], "base64") : record["data"];
  return validate(attrs, extensions, data);
}

/**
 * A batch answers with one status and carries one reply at most, so a function takes a batch only
 * when it holds exactly one event, and handles it as that event.
 */
function fromBatch(value: unknown): Parsed<CloudEvent> {
  if (!Array.isArray(value)) return { ok: false, error: "a CloudEvents batch must be a JSON array" };
  if (value.length !== 1) {
    return {
      ok: false,
      error: `batched CloudEvents are not accepted: a function handles one event per request, and this batch holds ${value.length}; send each event on its own (or in a batch of one)`,
    };
  }
  const r = fromStructured(value[0]);
  return r.ok ? r : { ok: false, error: `batch[0]: ${r.error}` };
}

/**
 * @param headers lower-case header names, as Node gives them
 * @param body the raw request body
 */
export function fromHttp(headers: Record<string, string | string[] | undefined>, body: Buffer): Parsed<CloudEvent> {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const contentType = header("content-type");
  const media = contentType?.split(";")[0]?.trim().toLowerCase();
  if (media === "application/cloudevents+json" || media === "application/cloudevents-batch+json") {
    const parsed = parseBody(body, "application/json");
    if (!parsed.ok) return parsed;
    return media === "application/cloudevents+json" ? fromStructured(parsed.value) : fromBatch(parsed.value);
  }
  if (header("ce-specversion") === undefined && header("ce-id") === undefined) {
    return { ok: false, error: "not a CloudEvent: no ce-* headers and no application/cloudevents+json body" };
  }
  const attrs: Record<string, unknown> = {};
  const extensions: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith("ce-") || value === undefined) continue;
    const key = name.slice(3);
    const v = Array.isArray(value) ? value[0]! : value;
    if ((CORE as readonly string[]).includes(key) && key !== "datacontenttype") attrs[key] = v;
    else extensions[key] = v;
  }
  attrs["datacontenttype"] = contentType; // undefined, as an absent optional attribute, without a Content-Type
  const data = parseBody(body, contentType);
  return data.ok ? validate(attrs, extensions, data.value) : data;
}

/** Binary-mode HTTP message for an event: the form Knative forwards replies in. */
export function toBinary(event: CloudEvent): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    "ce-specversion": event.specversion,
    "ce-id": event.id,
    "ce-type": event.type,
    "ce-source": event.source,
    "content-type": event.datacontenttype ?? "application/json",
  };
  if (event.subject !== undefined) headers["ce-subject"] = event.subject;
  if (event.time !== undefined) headers["ce-time"] = event.time;
  if (event.dataschema !== undefined) headers["ce-dataschema"] = event.dataschema;
  for (const [k, v] of Object.entries(event.extensions)) headers[`ce-${k}`] = v;
  return { headers, body: event.data === undefined ? "" : JSON.stringify(event.data) };
}

/** Structured-mode JSON of an event: the form recordings are kept in. */
export function toStructured(event: CloudEvent): Record<string, unknown> {
  const { extensions, data, ...attrs } = event;
  return { ...attrs, ...extensions, ...(data === undefined ? {} : { data }) };
}
