import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_EVENT_BYTES, maxEventBytes, refuseByHeaders, refuseReceived } from "./body-limit.ts";

describe("maxEventBytes", () => {
  it.each([
    { env: {}, limit: DEFAULT_MAX_EVENT_BYTES },
    { env: { MAX_EVENT_BYTES: "" }, limit: DEFAULT_MAX_EVENT_BYTES },
    { env: { MAX_EVENT_BYTES: "1" }, limit: 1 },
    { env: { MAX_EVENT_BYTES: "4194304" }, limit: 4194304 },
  ])("$env -> $limit", ({ env, limit }) => {
    expect(maxEventBytes(env)).toBe(limit);
  });

  it.each(["0", "-1", "1.5", "1e6", "1MiB", " 100", "9007199254740993"])("refuses %j", (value) => {
    expect(() => maxEventBytes({ MAX_EVENT_BYTES: value })).toThrow(
      `MAX_EVENT_BYTES must be a whole number of bytes of at least 1, got ${JSON.stringify(value)}`,
    );
  });

  it("is 1 MiB by default, over a hundred times the largest delivery recorded from the real Knative flow", () => {
    expect(DEFAULT_MAX_EVENT_BYTES).toBe(1048576);
    const dir = new URL("../../test/fixtures/knative/", import.meta.url);
    const bodies = readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => Buffer.byteLength((JSON.parse(readFileSync(new URL(f, dir), "utf8")) as { body: string }).body));
    expect(bodies.length).toBeGreaterThan(0);
    expect(Math.max(...bodies) * 100).toBeLessThan(DEFAULT_MAX_EVENT_BYTES);
  });
});

describe("refuseByHeaders", () => {
  const limit = 1000;
  it.each<{
    name: string;
    headers: { "content-length"?: string; "content-encoding"?: string };
    refusal?: { status: number; error: string };
  }>([
    { name: "no body headers", headers: {} },
    { name: "a body below the limit", headers: { "content-length": "999" } },
    { name: "a body exactly at the limit", headers: { "content-length": "1000" } },
    {
      name: "a body one byte over",
      headers: { "content-length": "1001" },
      refusal: { status: 413, error: "request body of 1001 bytes is over the limit of 1000 bytes (MAX_EVENT_BYTES)" },
    },
    {
      name: "a length past any number",
      headers: { "content-length": "99999999999999999999999" },
      refusal: {
        status: 413,
        error: "request body of 99999999999999999999999 bytes is over the limit of 1000 bytes (MAX_EVENT_BYTES)",
      },
    },
    { name: "identity encoding", headers: { "content-length": "10", "content-encoding": "Identity" } },
    {
      name: "a compressed body, however small",
      headers: { "content-length": "10", "content-encoding": "gzip" },
      refusal: {
        status: 415,
        error:
          "Content-Encoding gzip is not accepted: send the event uncompressed (its size is limited to 1000 bytes, MAX_EVENT_BYTES)",
      },
    },
    {
      name: "a compressed body over the limit: the encoding is named",
      headers: { "content-length": "5000", "content-encoding": " BR " },
      refusal: { status: 415, error: expect.stringMatching(/^Content-Encoding br is not accepted/) as string },
    },
  ])("$name", ({ headers, refusal }) => {
    expect(refuseByHeaders(headers, limit)).toEqual(refusal);
  });
});

describe("refuseReceived", () => {
  it.each([
    { received: 0, refused: false },
    { received: 1000, refused: false },
    { received: 1001, refused: true },
    { received: 65536, refused: true },
  ])("$received bytes of a 1000-byte limit: refused $refused", ({ received, refused }) => {
    expect(refuseReceived(received, 1000)).toEqual(
      refused
        ? {
            status: 413,
            error: `request body of at least ${received} bytes is over the limit of 1000 bytes (MAX_EVENT_BYTES)`,
          }
        : undefined,
    );
  });
});
