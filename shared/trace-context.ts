/**
 * W3C Trace Context (`traceparent`, `tracestate`) as the functions continue it, so one DGD change
 * can be followed across eligibility, apply and status. It arrives as the HTTP headers Knative
 * propagates, or as the CloudEvents Distributed Tracing extension (`ce-traceparent` in binary
 * mode, `traceparent` in structured mode), and leaves in every event a function sends.
 *
 * A function records no spans, but it does name its own: the outgoing `traceparent` keeps the
 * trace-id and flags and carries a span id derived from the function, the event's source and id
 * and the trace-id, rather than a random one. A redelivered event therefore gets a byte-identical
 * reply (as its reply id already is), and each function in a chain still has a span id of its
 * own, so the log lines of one change order into a tree.
 *
 * Invalid values are ignored, as the specification asks of a receiver: no error, no trace.
 */
import { createHash } from "node:crypto";

/** A parsed, valid `traceparent`. */
export interface TraceParent {
  traceId: string;
  parentId: string;
  flags: string;
}

/** The trace an invocation continues, and its own span in it. */
export interface Span {
  traceId: string;
  spanId: string;
  /** The `traceparent` received (the caller's span), for the log. */
  parent: string;
  /** The `traceparent` sent on: the same trace-id and flags, this invocation's span id. */
  traceparent: string;
  /** Passed on as received: the product adds no entry of its own. */
  tracestate?: string;
}

// Level 1, section 3.2: version, trace-id, parent-id, flags; a later version may append fields.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO = /^0+$/;
/** Sampled (level 1) and random-trace-id (level 2); the other bits are reserved and sent as 0. */
const KNOWN_FLAGS = 0x03;

/** Optional whitespace around a header value, as HTTP allows. */
const trimOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, "");

export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined) return undefined;
  const m = TRACEPARENT.exec(trimOws(value));
  if (!m) return undefined;
  // The four groups always match when the expression does; only the appended fields may be absent.
  const [, version, traceId, parentId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  // ff is forbidden; version 00 has exactly four fields; all-zero ids are invalid.
  if (version === "ff" || (version === "00" && rest !== undefined) || ZERO.test(traceId) || ZERO.test(parentId))
    return undefined;
  return { traceId, parentId, flags: (parseInt(flags, 16) & KNOWN_FLAGS).toString(16).padStart(2, "0") };
}

// Level 1, section 3.3.1: a simple key, or a multi-tenant key `tenant@system`.
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const TRACESTATE_MAX_MEMBERS = 32;

/** A valid `tracestate` without its optional whitespace and empty members; undefined when it is invalid or empty. */
export function parseTracestate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const members = value
    .split(",")
    .map(trimOws)
    .filter((m) => m !== "");
  const keys = new Set<string>();
  for (const member of members) {
    const eq = member.indexOf("=");
    const key = member.slice(0, eq);
    if (eq < 0 || !TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(eq + 1)) || keys.has(key))
      return undefined;
    keys.add(key);
  }
  return members.length === 0 || members.length > TRACESTATE_MAX_MEMBERS ? undefined : members.join(",");
}

type Headers = Record<string, string | string[] | undefined>;

/** The caller's trace context, as received. */
export interface Incoming {
  traceparent: TraceParent;
  /** The `traceparent` value itself, for the log. */
  raw: string;
  tracestate?: string;
}

/** A header sent more than once: Node joins most repeats with ", ", and hands some over as a list. */
const joined = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(",") : value);

/**
 * The trace an invocation continues: the HTTP headers first (the latest hop, when Knative traces
 * the delivery itself), else the event's extension attributes. `tracestate` comes from the same
 * carrier as the `traceparent` chosen, and only with a valid one.
 */
export function incomingTrace(headers: Headers, extensions: Readonly<Record<string, string>>): Incoming | undefined {
  const carriers = [
    { traceparent: joined(headers["traceparent"]), tracestate: joined(headers["tracestate"]) },
    { traceparent: extensions["traceparent"], tracestate: extensions["tracestate"] },
  ];
  for (const carrier of carriers) {
    const traceparent = parseTraceparent(carrier.traceparent);
    if (!traceparent) continue;
    const tracestate = parseTracestate(carrier.tracestate);
    return { traceparent, raw: trimOws(carrier.traceparent!), ...(tracestate === undefined ? {} : { tracestate }) };
  }
  return undefined;
}

/**
 * This invocation's span of the incoming trace. `seed` names the invocation (function, event source and id);
 * the span id is the first 64 bits of a SHA-256, all-zero (invalid) with probability 2^-64.
 */
export function continueTrace(incoming: Incoming, ...seed: string[]): Span {
  const { traceId, flags } = incoming.traceparent;
  const spanId = createHash("sha256")
    .update([...seed, traceId].join("\u0000"))
    .digest("hex")
    .slice(0, 16);
  return {
    traceId,
    spanId,
    parent: incoming.raw,
    traceparent: `00-${traceId}-${spanId}-${flags}`,
    ...(incoming.tracestate === undefined ? {} : { tracestate: incoming.tracestate }),
  };
}

/** The span as CloudEvents Distributed Tracing extension attributes, or as W3C request headers (same names). */
export function traceAttributes(span: Span): Record<string, string> {
  return { traceparent: span.traceparent, ...(span.tracestate === undefined ? {} : { tracestate: span.tracestate }) };
}

/** The span in an invocation's log line. */
export function traceLogFields(span: Span): { trace_id: string; span_id: string; traceparent: string } {
  return { trace_id: span.traceId, span_id: span.spanId, traceparent: span.parent };
}
