// What the entry point serves, or why it refuses to start, for each way it can be given its
// settings: the arguments win over the environment, as the Functions Framework's main.js reads them.
import { describe, expect, it } from "vitest";
import { entrySettings } from "./entry-settings.ts";

const source = "/app/functions/apply/index.mjs";
const env = { FUNCTION_TARGET: "apply", FUNCTION_SOURCE: source };

describe("entrySettings", () => {
  it.each([
    [
      "the environment alone, on port 8080 with a 1 MiB limit",
      [],
      env,
      { target: "apply", source, port: 8080, limit: 1048576 },
    ],
    [
      "PORT and MAX_EVENT_BYTES from the environment",
      [],
      { ...env, PORT: "9090", MAX_EVENT_BYTES: "2048" },
      { target: "apply", source, port: 9090, limit: 2048 },
    ],
    [
      "the arguments over the environment",
      ["--target=status", "--source=/s.mjs", "--port=0"],
      { ...env, PORT: "9090" },
      { target: "status", source: "/s.mjs", port: 0, limit: 1048576 },
    ],
    [
      "the arguments alone",
      ["--target", "t", "--source", "/t.mjs"],
      {},
      { target: "t", source: "/t.mjs", port: 8080, limit: 1048576 },
    ],
    ["the highest port", [], { ...env, PORT: "65535" }, { target: "apply", source, port: 65535, limit: 1048576 }],
  ] as const)("serves %s", (_what, args, environment, expected) => {
    expect(entrySettings(args, environment)).toEqual(expected);
  });

  const NOT_SET =
    "the function to serve is not set: give FUNCTION_TARGET and FUNCTION_SOURCE (or --target and --source)";
  it.each([
    ["no target", [], { FUNCTION_SOURCE: source }, NOT_SET],
    ["no source", ["--target=apply"], {}, NOT_SET],
    ["an empty target", [], { ...env, FUNCTION_TARGET: "" }, NOT_SET],
    ["a port over 65535", [], { ...env, PORT: "65536" }, 'the port must be a number from 0 to 65535, got "65536"'],
    ["a port that is no number", ["--port=http"], env, 'the port must be a number from 0 to 65535, got "http"'],
    [
      "a port with six digits",
      [],
      { ...env, PORT: "000080" },
      'the port must be a number from 0 to 65535, got "000080"',
    ],
    ["a negative port", [], { ...env, PORT: "-1" }, 'the port must be a number from 0 to 65535, got "-1"'],
    [
      "a bad body limit",
      [],
      { ...env, MAX_EVENT_BYTES: "1e6" },
      'MAX_EVENT_BYTES must be a whole number of bytes of at least 1, got "1e6"',
    ],
  ] as const)("refuses %s, saying why", (_what, args, environment, error) => {
    expect(entrySettings(args, environment)).toEqual({ error });
  });

  it("refuses an option it does not know, naming it", () => {
    expect(entrySettings(["--taget=apply"], env)).toEqual({ error: expect.stringContaining("--taget") as unknown });
  });
});
