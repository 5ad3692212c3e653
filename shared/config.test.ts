import { describe, expect, it } from "vitest";
import { parseConfig, variablesRead } from "./config.ts";

describe("parseConfig", () => {
  it("has defaults for everything but the sink", () => {
    expect(parseConfig({})).toEqual({
      defaults: { discoveryBackend: "kubernetes", relayCommand: ["python3", "-m", "dynamo.kv_dc_relay"] },
      resyncPeriodSeconds: 60,
      resyncSlots: 10,
      sink: undefined,
      dgdApiVersion: "nvidia.com/v1beta1",
      deadlineSeconds: 20,
      statusBatchMs: 0,
    });
  });

  it("reads every variable", () => {
    expect(
      parseConfig({
        DEFAULT_DISCOVERY_BACKEND: "etcd",
        RESYNC_PERIOD_SECONDS: "30",
        RESYNC_SLOTS: "4",
        K_SINK: "http://broker/ns/b",
        DGD_API_VERSION: "nvidia.com/v1alpha1",
        INVOCATION_DEADLINE_SECONDS: "8",
        RELAY_COMMAND: '["python3", "-m", "dynamo.pool_relay"]',
        STATUS_BATCH_MS: "40",
      }),
    ).toEqual({
      defaults: { discoveryBackend: "etcd", relayCommand: ["python3", "-m", "dynamo.pool_relay"] },
      resyncPeriodSeconds: 30,
      resyncSlots: 4,
      sink: "http://broker/ns/b",
      dgdApiVersion: "nvidia.com/v1alpha1",
      deadlineSeconds: 8,
      statusBatchMs: 40,
    });
  });

  it.each(["-1", "10001", "2.5", "soon"])("refuses STATUS_BATCH_MS %s, naming the variable", (value) => {
    expect(() => parseConfig({ STATUS_BATCH_MS: value })).toThrow(/STATUS_BATCH_MS: /);
  });

  it("takes STATUS_BATCH_MS at its bounds", () => {
    expect([
      parseConfig({ STATUS_BATCH_MS: "0" }).statusBatchMs,
      parseConfig({ STATUS_BATCH_MS: "10000" }).statusBatchMs,
    ]).toEqual([0, 10000]);
  });

  it("lists every bad variable in one error", () => {
    expect(() =>
      parseConfig({ DEFAULT_DISCOVERY_BACKEND: "zk", RESYNC_SLOTS: "0", K_SINK: "not a url", RELAY_COMMAND: "[]" }),
    ).toThrow(/DEFAULT_DISCOVERY_BACKEND: .*; RESYNC_SLOTS: .*; K_SINK: .*; RELAY_COMMAND: /);
  });

  it.each([
    {
      name: "a shell-style string",
      value: "python3 -m dynamo.pool_relay",
      error:
        /RELAY_COMMAND: must be a JSON array of strings, such as \["python3","-m","dynamo.kv_dc_relay"\]; got "python3 -m dynamo.pool_relay"/,
    },
    { name: "an unclosed array", value: '["python3"', error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "an empty value", value: "", error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "a JSON string", value: '"python3"', error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "a non-string element", value: '["python3", 3]', error: /RELAY_COMMAND\.1: / },
    { name: "an empty element", value: '["python3", ""]', error: /RELAY_COMMAND\.1: / },
    { name: "an empty array", value: "[]", error: /RELAY_COMMAND: must name at least the executable/ },
    {
      name: "the whole command in one element",
      value: '["python3 -m dynamo.pool_relay"]',
      error: /RELAY_COMMAND: the executable \(the first element\) contains whitespace/,
    },
  ])("refuses RELAY_COMMAND as $name, naming the variable", ({ value, error }) => {
    expect(() => parseConfig({ RELAY_COMMAND: value })).toThrow(error);
  });

  it("refuses an empty RELAY_COMMAND for its one fault only, not also for an executable it lacks", () => {
    expect(() => parseConfig({ RELAY_COMMAND: "[]" })).toThrow(
      /^invalid configuration: RELAY_COMMAND: must name at least the executable$/,
    );
  });
});

describe("parseConfig for a program", () => {
  it("gives the program what it reads, as parsed from env", () => {
    const status = parseConfig(
      { DGD_API_VERSION: "nvidia.com/v1alpha1", STATUS_BATCH_MS: "40", DEFAULT_DISCOVERY_BACKEND: "etcd" },
      "status",
    );
    expect([status.dgdApiVersion, status.statusBatchMs, status.defaults.discoveryBackend]).toEqual([
      "nvidia.com/v1alpha1",
      40,
      "etcd",
    ]);
  });

  it.each([
    { program: "apply", listed: "dgdApiVersion", field: "resyncSlots", variable: /apply read RESYNC_SLOTS/ },
    {
      program: "dead-letter",
      listed: "sink",
      field: "defaults",
      variable: /dead-letter read DEFAULT_DISCOVERY_BACKEND and RELAY_COMMAND/,
    },
    {
      program: "source",
      listed: "defaults",
      field: "deadlineSeconds",
      variable: /source read INVOCATION_DEADLINE_SECONDS/,
    },
    {
      program: "eligibility",
      listed: "resyncSlots",
      field: "dgdApiVersion",
      variable: /eligibility read DGD_API_VERSION/,
    },
  ] as const)(
    "throws when $program reads $field, which it does not list (and not for $listed)",
    ({ program, listed, field, variable }) => {
      const config = parseConfig({ K_SINK: "http://broker/ns/b" }, program);
      expect(config[listed]).toEqual(parseConfig({ K_SINK: "http://broker/ns/b" })[listed]);
      expect(() => config[field]).toThrow(variable);
    },
  );

  it("parses only what the program reads: a bad value of another program's setting does not stop it", () => {
    expect(() => parseConfig({ RESYNC_SLOTS: "0" }, "eligibility")).toThrow(/RESYNC_SLOTS/);
    expect(parseConfig({ RESYNC_SLOTS: "0", INVOCATION_DEADLINE_SECONDS: "9" }, "apply").deadlineSeconds).toBe(9);
  });

  it.each([
    [
      "eligibility",
      [
        "DEFAULT_DISCOVERY_BACKEND",
        "FUNCTION_SOURCE",
        "FUNCTION_TARGET",
        "INVOCATION_DEADLINE_SECONDS",
        "K_SINK",
        "MAX_EVENT_BYTES",
        "PORT",
        "RELAY_COMMAND",
        "RESYNC_PERIOD_SECONDS",
        "RESYNC_SLOTS",
      ],
    ],
    [
      "apply",
      [
        "DEFAULT_DISCOVERY_BACKEND",
        "DGD_API_VERSION",
        "FUNCTION_SOURCE",
        "FUNCTION_TARGET",
        "INVOCATION_DEADLINE_SECONDS",
        "MAX_EVENT_BYTES",
        "PORT",
        "RELAY_COMMAND",
      ],
    ],
    [
      "status",
      [
        "DEFAULT_DISCOVERY_BACKEND",
        "DGD_API_VERSION",
        "FUNCTION_SOURCE",
        "FUNCTION_TARGET",
        "INVOCATION_DEADLINE_SECONDS",
        "MAX_EVENT_BYTES",
        "PORT",
        "RELAY_COMMAND",
        "STATUS_BATCH_MS",
      ],
    ],
    [
      "dead-letter",
      ["FUNCTION_SOURCE", "FUNCTION_TARGET", "INVOCATION_DEADLINE_SECONDS", "K_SINK", "MAX_EVENT_BYTES", "PORT"],
    ],
    [
      "source",
      [
        "DEFAULT_DISCOVERY_BACKEND",
        "DGD_API_VERSION",
        "K_SINK",
        "POD_NAME",
        "POD_NAMESPACE",
        "PORT",
        "RELAY_COMMAND",
        "REQUEUE_SECONDS",
        "SOURCE_BATCH_MS",
        "SOURCE_CONCURRENCY",
        "SOURCE_RELIST_SECONDS",
      ],
    ],
  ] as const)("%s reads %j", (program, variables) => {
    expect(variablesRead(program)).toEqual(variables);
  });
});
