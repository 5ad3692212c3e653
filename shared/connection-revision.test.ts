import { describe, expect, it } from "vitest";
import { connectionRevision, stableJson } from "./connection-revision.ts";

const base = { clusterID: "dc-1", image: "relay:1", env: [{ name: "A", value: "1" }] };
const COMMAND = ["python3", "-m", "dynamo.kv_dc_relay"];

describe("connectionRevision", () => {
  it("is a lowercase hex SHA-256", () => {
    expect(connectionRevision(base, COMMAND)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is the same for the same settings", () => {
    expect(connectionRevision({ ...base, env: [{ name: "A", value: "1" }] }, [...COMMAND])).toBe(
      connectionRevision(base, COMMAND),
    );
  });

  it("treats no env and an empty env alike", () => {
    expect(connectionRevision({ clusterID: "dc-1", image: "relay:1" }, COMMAND)).toBe(
      connectionRevision({ clusterID: "dc-1", image: "relay:1", env: [] }, COMMAND),
    );
  });

  it.each([
    { name: "cluster ID", change: { clusterID: "dc-2" } },
    { name: "image", change: { image: "relay:2" } },
    { name: "env value", change: { env: [{ name: "A", value: "2" }] } },
    {
      name: "env order",
      change: {
        env: [
          { name: "B", value: "2" },
          { name: "A", value: "1" },
        ],
      },
    },
  ])("changes with the $name", ({ change }) => {
    const reordered =
      change.env?.length === 2
        ? {
            ...base,
            env: [
              { name: "A", value: "1" },
              { name: "B", value: "2" },
            ],
          }
        : base;
    expect(connectionRevision({ ...reordered, ...change }, COMMAND)).not.toBe(connectionRevision(reordered, COMMAND));
  });

  it("with the default command, is the revision of the versions before the command was configurable (an upgrade rolls no Relay)", () => {
    // Computed by the code of commit d80df05~1, which had no command input.
    expect(connectionRevision(base, COMMAND)).toBe("9a0830caf7e97b37ad127cede1aa4f49b170c4ae427dadf5a728957a0c40f920");
  });

  it.each([
    { name: "another module", command: ["python3", "-m", "dynamo.pool_relay"] },
    { name: "an added argument", command: [...COMMAND, "--verbose"] },
    { name: "the same words split differently", command: ["python3", "-m dynamo.kv_dc_relay"] },
    { name: "a prefix of the default", command: ["python3", "-m"] },
    { name: "an empty command", command: [] },
  ])("changes with the command: $name", ({ command }) => {
    expect(connectionRevision(base, command)).not.toBe(connectionRevision(base, COMMAND));
  });
});

describe("stableJson", () => {
  it("sorts object keys at every depth, keeps array order and drops undefined", () => {
    expect(stableJson({ b: 1, a: [{ d: 1, c: undefined, b: "x" }, 2] })).toBe('{"a":[{"b":"x","d":1},2],"b":1}');
  });

  it.each([
    {
      name: "null, in an object and an array",
      value: { n: null, l: [null, true] },
      expected: '{"l":[null,true],"n":null}',
    },
    { name: "a string at the top", value: 'a"b', expected: '"a\\"b"' },
    {
      name: "keys sorted by code unit, upper case first",
      value: { b: 1, B: 2, a: 3, "": 4 },
      expected: '{"":4,"B":2,"a":3,"b":1}',
    },
  ])("writes $name as JSON does", ({ value, expected }) => {
    expect(stableJson(value)).toBe(expected);
  });
});
