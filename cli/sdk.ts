/**
 * The CloudEvents SDK, for the work it does well: the wire forms. It makes the HTTP messages
 * replay sends (binary and structured) and the JSON record writes. It never parses input here:
 * its readers invent an id and a time and take a missing source, a bad time or specversion 0.9
 * (see docs/cli.md), so events reach it only after the strict parser of shared/cloudevent.ts, and
 * then through its own strict constructor. Only the CLI loads it; the functions never do.
 */
import { CloudEvent as SdkEvent, HTTP, ValidationError } from "cloudevents";
import type { CloudEvent, Parsed } from "../shared/cloudevent.ts";

export type { SdkEvent };

/** The SDK's schema errors (ajv's), each as the attribute and what is wrong with it. */
function problems(err: unknown, input: Record<string, unknown>): string {
  if (!(err instanceof ValidationError) || !err.errors?.length) return (err as Error).message;
  return err.errors
    .map((e) => {
      if (typeof e === "string") return e;
      const field = e.instancePath.replace(/^\//, "") || String(e.params["missingProperty"] ?? "");
      const value = input[field];
      return `${field} ${e.message ?? "is invalid"}${value === undefined ? "" : `, got ${JSON.stringify(value)}`}`;
    })
    .join("; ");
}

/**
 * The event as the SDK holds it, validated by the SDK's own schema as well (it also wants `source`
 * a URI reference and `dataschema` a URI). The SDK stamps the current time on an event without one.
 */
export function toSdk(event: CloudEvent): Parsed<SdkEvent<unknown>> {
  const { extensions, data, ...attributes } = event;
  const input = { ...extensions, ...attributes, ...(data === undefined ? {} : { data }) };
  try {
    return { ok: true, value: new SdkEvent<unknown>(input, true) };
  } catch (err) {
    return { ok: false, error: `invalid CloudEvent ${JSON.stringify(event.id)}: ${problems(err, input)}` };
  }
}

/** The HTTP request for an event, made by the SDK's binary or structured serializer. */
export function httpMessage(
  event: SdkEvent<unknown>,
  mode: "binary" | "structured",
): { headers: Record<string, string>; body: string | Buffer | undefined } {
  const message = mode === "binary" ? HTTP.binary(event) : HTTP.structured(event);
  const headers = Object.fromEntries(
    Object.entries(message.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
  );
  const { body } = message;
  // Binary mode sends JSON data that is a string unquoted, which no JSON reader takes (measured):
  // encode it. Numbers and booleans it passes through as they are, which is their JSON.
  if (
    mode === "binary" &&
    typeof event.data === "string" &&
    /^application\/(.+\+)?json\b/.test(headers["content-type"] ?? "")
  )
    return { headers, body: JSON.stringify(event.data) };
  return {
    headers,
    body: body === undefined || typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  };
}

/** The structured-mode JSON of an event, one line: what record writes and replay reads. */
export function structuredJson(event: SdkEvent<unknown>): string {
  return String(HTTP.structured(event).body);
}
