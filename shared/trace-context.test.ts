import { describe, expect, it } from "vitest";
import {
  continueTrace,
  incomingTrace,
  parseTraceparent,
  parseTracestate,
  traceAttributes,
  traceLogFields,
} from "./trace-context.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const VALID = `00-${TRACE}-${PARENT}-01`;

describe("parseTraceparent", () => {
  it.each<{
    name: string;
    value: string | undefined;
    want: { traceId: string; parentId: string; flags: string } | undefined;
  }>([
    { name: "a version 00 value", value: VALID, want: { traceId: TRACE, parentId: PARENT, flags: "01" } },
    {
      name: "surrounding spaces and tabs",
      value: ` \t${VALID} `,
      want: { traceId: TRACE, parentId: PARENT, flags: "01" },
    },
    {
      name: "several spaces and tabs after it",
      value: `${VALID} \t `,
      want: { traceId: TRACE, parentId: PARENT, flags: "01" },
    },
    { name: "not sampled", value: `00-${TRACE}-${PARENT}-00`, want: { traceId: TRACE, parentId: PARENT, flags: "00" } },
    {
      name: "reserved flag bits (sent on as 0, sampled and random kept)",
      value: `00-${TRACE}-${PARENT}-ff`,
      want: { traceId: TRACE, parentId: PARENT, flags: "03" },
    },
    {
      name: "a later version with a field appended",
      value: `cc-${TRACE}-${PARENT}-01-what-the-future-holds`,
      want: { traceId: TRACE, parentId: PARENT, flags: "01" },
    },
    {
      name: "a later version without appended fields",
      value: `01-${TRACE}-${PARENT}-01`,
      want: { traceId: TRACE, parentId: PARENT, flags: "01" },
    },
    { name: "absent", value: undefined, want: undefined },
    { name: "empty", value: "", want: undefined },
    { name: "version ff (forbidden)", value: `ff-${TRACE}-${PARENT}-01`, want: undefined },
    { name: "version 00 with a field appended", value: `${VALID}-00`, want: undefined },
    {
      name: "a later version whose flags run into more characters",
      value: `cc-${TRACE}-${PARENT}-01x`,
      want: undefined,
    },
    { name: "upper-case hex", value: `00-${TRACE.toUpperCase()}-${PARENT}-01`, want: undefined },
    { name: "an all-zero trace-id", value: `00-${"0".repeat(32)}-${PARENT}-01`, want: undefined },
    { name: "an all-zero parent-id", value: `00-${TRACE}-${"0".repeat(16)}-01`, want: undefined },
    { name: "a short trace-id", value: `00-${TRACE.slice(1)}-${PARENT}-01`, want: undefined },
    { name: "a non-hex parent-id", value: `00-${TRACE}-${PARENT.slice(1)}g-01`, want: undefined },
    { name: "two values joined (the header sent twice)", value: `${VALID}, ${VALID}`, want: undefined },
  ])("$name", ({ value, want }) => {
    expect(parseTraceparent(value)).toEqual(want);
  });
});

describe("parseTracestate", () => {
  it.each<{ name: string; value: string | undefined; want: string | undefined }>([
    { name: "one member", value: "congo=t61rcWkgMzE", want: "congo=t61rcWkgMzE" },
    {
      name: "members with whitespace and empty members between",
      value: " rojo=00f067aa0ba902b7 ,\t, congo=t61rcWkgMzE",
      want: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    },
    { name: "a multi-tenant key", value: "fw529a3039@dt=FW4", want: "fw529a3039@dt=FW4" },
    { name: "a value with inner spaces", value: "a=b c", want: "a=b c" },
    {
      name: "members with several spaces and tabs around them",
      value: "rojo=1 \t ,  \tcongo=2",
      want: "rojo=1,congo=2",
    },
    { name: "absent", value: undefined, want: undefined },
    { name: "a member with an empty key", value: "=x", want: undefined },
    { name: "only empty members", value: " , ", want: undefined },
    { name: "an upper-case key", value: "Congo=x", want: undefined },
    { name: "a member without =", value: "congo", want: undefined },
    { name: "a value containing =", value: "congo=a=b", want: undefined },
    { name: "an empty value", value: "congo=", want: undefined },
    { name: "a duplicate key", value: "a=1,a=2", want: undefined },
    { name: "33 members", value: Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), want: undefined },
  ])("$name", ({ value, want }) => {
    expect(parseTracestate(value)).toBe(want);
  });

  it("takes 32 members", () => {
    const value = Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(",");
    expect(parseTracestate(value)).toBe(value);
  });
});

describe("incomingTrace", () => {
  const OTHER = `00-${"a".repeat(32)}-${"b".repeat(16)}-00`;
  it.each<{
    name: string;
    headers: Record<string, string | string[]>;
    extensions: Record<string, string>;
    traceId: string | undefined;
    tracestate?: string;
  }>([
    { name: "the HTTP header", headers: { traceparent: VALID }, extensions: {}, traceId: TRACE },
    { name: "the extension attribute", headers: {}, extensions: { traceparent: VALID }, traceId: TRACE },
    {
      name: "the HTTP header before the extension (the latest hop)",
      headers: { traceparent: VALID },
      extensions: { traceparent: OTHER },
      traceId: TRACE,
    },
    {
      name: "the extension when the header is invalid",
      headers: { traceparent: "garbage" },
      extensions: { traceparent: OTHER },
      traceId: "a".repeat(32),
    },
    {
      name: "tracestate from the carrier whose traceparent is taken",
      headers: { traceparent: "garbage", tracestate: "h=1" },
      extensions: { traceparent: VALID, tracestate: "e=1" },
      traceId: TRACE,
      tracestate: "e=1",
    },
    {
      name: "tracestate sent as several headers, combined",
      headers: { traceparent: VALID, tracestate: ["a=1", "b=2"] },
      extensions: {},
      traceId: TRACE,
      tracestate: "a=1,b=2",
    },
    {
      name: "no tracestate when it is invalid",
      headers: { traceparent: VALID, tracestate: "A=1" },
      extensions: {},
      traceId: TRACE,
    },
    {
      name: "nothing when neither is valid (tracestate alone is no trace)",
      headers: { traceparent: "garbage", tracestate: "a=1" },
      extensions: { traceparent: `00-${TRACE}-${PARENT}` },
      traceId: undefined,
    },
    { name: "nothing when there is none", headers: {}, extensions: {}, traceId: undefined },
  ])("$name", ({ headers, extensions, traceId, tracestate }) => {
    const got = incomingTrace(headers, extensions);
    expect(got?.traceparent.traceId).toBe(traceId);
    expect(got?.tracestate).toBe(tracestate);
  });
});

describe("incomingTrace, whole", () => {
  it("keeps the traceparent received, without its whitespace, and the tracestate when valid", () => {
    expect(incomingTrace({ traceparent: ` ${VALID}\t `, tracestate: "congo=t61rcWkgMzE" }, {})).toStrictEqual({
      traceparent: { traceId: TRACE, parentId: PARENT, flags: "01" },
      raw: VALID,
      tracestate: "congo=t61rcWkgMzE",
    });
  });

  it("carries no tracestate when none is valid", () => {
    expect(incomingTrace({}, { traceparent: VALID, tracestate: "Congo=x" })).toStrictEqual({
      traceparent: { traceId: TRACE, parentId: PARENT, flags: "01" },
      raw: VALID,
    });
  });
});

describe("continueTrace", () => {
  const incoming = incomingTrace({ traceparent: ` ${VALID}`, tracestate: "congo=t61rcWkgMzE" }, {})!;

  it("keeps the trace-id and flags, names a span of its own, and passes tracestate on", () => {
    const span = continueTrace(incoming, "apply", "/src", "e1");
    const sent = parseTraceparent(span.traceparent);
    expect(sent).toEqual({ traceId: TRACE, parentId: span.spanId, flags: "01" });
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.spanId).not.toBe(PARENT);
    expect(traceAttributes(span)).toEqual({ traceparent: span.traceparent, tracestate: "congo=t61rcWkgMzE" });
    expect(traceLogFields(span)).toEqual({ trace_id: TRACE, span_id: span.spanId, traceparent: VALID });
  });

  it("gives the same invocation the same span (a redelivery replies the same), and another invocation another", () => {
    const span = (...seed: string[]) => continueTrace(incoming, ...seed).spanId;
    expect(span("apply", "/src", "e1")).toBe(span("apply", "/src", "e1"));
    expect(span("apply", "/src", "e1")).not.toBe(span("status", "/src", "e1"));
    expect(span("apply", "/src", "e1")).not.toBe(span("apply", "/src", "e2"));
    const otherTrace = incomingTrace({ traceparent: `00-${"c".repeat(32)}-${PARENT}-01` }, {})!;
    expect(continueTrace(otherTrace, "apply", "/src", "e1").spanId).not.toBe(span("apply", "/src", "e1"));
  });

  it("sends no tracestate when none came", () => {
    const span = continueTrace(incomingTrace({}, { traceparent: VALID })!, "apply", "/src", "e1");
    expect(Object.keys(span)).toEqual(["traceId", "spanId", "parent", "traceparent"]);
    expect(traceAttributes(span)).toStrictEqual({ traceparent: `00-${TRACE}-${span.spanId}-01` });
  });

  it("gives invocations whose names differ only in where one part ends different spans", () => {
    expect(continueTrace(incoming, "apply", "/src", "e1").spanId).not.toBe(
      continueTrace(incoming, "apply/", "src", "e1").spanId,
    );
    expect(continueTrace(incoming, "apply", "/src", "e1").spanId).not.toBe(
      continueTrace(incoming, "apply", "/src", "e", "1").spanId,
    );
  });
});
