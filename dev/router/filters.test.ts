import { describe, expect, it } from "vitest";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import { matchesTrigger } from "./filters.ts";
import { backoffMs, durationMs, retriable } from "./delivery.ts";

const event = (type: string, extensions: Record<string, string> = {}): CloudEvent => ({ specversion: "1.0", id: "1", type, source: "/s", extensions, data: undefined });

describe("matchesTrigger", () => {
  it.each([
    { name: "attributes exact", t: { filter: { attributes: { type: "a" } } }, e: event("a"), expected: true },
    { name: "attributes mismatch", t: { filter: { attributes: { type: "a" } } }, e: event("b"), expected: false },
    { name: "attributes empty value means present", t: { filter: { attributes: { kind: "" } } }, e: event("a", { kind: "Service" }), expected: true },
    { name: "attributes empty value, absent", t: { filter: { attributes: { kind: "" } } }, e: event("a"), expected: false },
    { name: "no filter matches all", t: {}, e: event("x"), expected: true },
    { name: "prefix", t: { filters: [{ prefix: { type: "dev.knative.apiserver.resource." } }] }, e: event("dev.knative.apiserver.resource.add"), expected: true },
    { name: "suffix", t: { filters: [{ suffix: { type: ".v1" } }] }, e: event("x.v2"), expected: false },
    { name: "any of all", t: { filters: [{ any: [{ all: [{ exact: { type: "a" } }, { exact: { kind: "K" } }] }, { exact: { type: "b" } }] }] }, e: event("a", { kind: "K" }), expected: true },
    { name: "not", t: { filters: [{ not: { exact: { type: "a" } } }] }, e: event("a"), expected: false },
    { name: "filters win over filter", t: { filter: { attributes: { type: "a" } }, filters: [{ exact: { type: "b" } }] }, e: event("b"), expected: true },
  ])("$name → $expected", ({ t, e, expected }) => {
    expect(matchesTrigger(t as never, e)).toBe(expected);
  });

  it("refuses CESQL rather than guessing", () => {
    expect(() => matchesTrigger({ filters: [{ cesql: "type = 'a'" }] }, event("a"))).toThrow(/CESQL/);
  });
});

describe("delivery", () => {
  it("parses ISO-8601 durations", () => {
    expect([durationMs("PT0.2S"), durationMs("PT30S"), durationMs("PT1M"), durationMs(undefined)]).toEqual([200, 30000, 60000, undefined]);
    expect(() => durationMs("30s")).toThrow(/ISO-8601/);
  });
  it("waits exponentially, linearly, or not at all without both policy and delay", () => {
    expect([0, 1, 2].map((n) => backoffMs({ backoffPolicy: "exponential", backoffDelay: "PT0.5S" }, n))).toEqual([500, 1000, 2000]);
    expect([0, 1, 2].map((n) => backoffMs({ backoffPolicy: "linear", backoffDelay: "PT0.5S" }, n))).toEqual([0, 500, 1000]);
    expect(backoffMs({ backoffDelay: "PT1S" }, 3)).toBe(0);
  });
  it("retries 5xx, 404, 408, 409, 429 and no answer, not other 4xx", () => {
    expect([0, 500, 503, 404, 408, 409, 429].every(retriable)).toBe(true);
    expect([400, 401, 403, 413, 422].some(retriable)).toBe(false);
  });
});
