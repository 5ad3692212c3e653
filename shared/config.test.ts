import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";

describe("parseConfig", () => {
  it("has defaults for everything but the sink", () => {
    expect(parseConfig({})).toEqual({
      defaults: { discoveryBackend: "kubernetes", relayCommand: ["python3", "-m", "dynamo.kv_dc_relay"] }, resyncPeriodSeconds: 60, resyncSlots: 10, sink: undefined, dgdApiVersion: "nvidia.com/v1beta1", deadlineSeconds: 20, statusBatchMs: 0,
    });
  });

  it("reads every variable", () => {
    expect(parseConfig({ DEFAULT_DISCOVERY_BACKEND: "etcd", RESYNC_PERIOD_SECONDS: "30", RESYNC_SLOTS: "4", K_SINK: "http://broker/ns/b", DGD_API_VERSION: "nvidia.com/v1alpha1", INVOCATION_DEADLINE_SECONDS: "8", RELAY_COMMAND: '["python3", "-m", "dynamo.pool_relay"]', STATUS_BATCH_MS: "40" })).toEqual({
      defaults: { discoveryBackend: "etcd", relayCommand: ["python3", "-m", "dynamo.pool_relay"] }, resyncPeriodSeconds: 30, resyncSlots: 4, sink: "http://broker/ns/b", dgdApiVersion: "nvidia.com/v1alpha1", deadlineSeconds: 8, statusBatchMs: 40,
    });
  });

  it.each(["-1", "10001", "2.5", "soon"])("refuses STATUS_BATCH_MS %s, naming the variable", (value) => {
    expect(() => parseConfig({ STATUS_BATCH_MS: value })).toThrow(/STATUS_BATCH_MS: /);
  });

  it("takes STATUS_BATCH_MS at its bounds", () => {
    expect([parseConfig({ STATUS_BATCH_MS: "0" }).statusBatchMs, parseConfig({ STATUS_BATCH_MS: "10000" }).statusBatchMs]).toEqual([0, 10000]);
  });

  it("lists every bad variable in one error", () => {
    expect(() => parseConfig({ DEFAULT_DISCOVERY_BACKEND: "zk", RESYNC_SLOTS: "0", K_SINK: "not a url", RELAY_COMMAND: "[]" })).toThrow(/DEFAULT_DISCOVERY_BACKEND: .*; RESYNC_SLOTS: .*; K_SINK: .*; RELAY_COMMAND: /);
  });

  it.each([
    { name: "a shell-style string", value: "python3 -m dynamo.pool_relay", error: /RELAY_COMMAND: must be a JSON array of strings, such as \["python3","-m","dynamo.kv_dc_relay"\]; got "python3 -m dynamo.pool_relay"/ },
    { name: "an unclosed array", value: '["python3"', error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "an empty value", value: "", error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "a JSON string", value: '"python3"', error: /RELAY_COMMAND: must be a JSON array of strings/ },
    { name: "a non-string element", value: '["python3", 3]', error: /RELAY_COMMAND\.1: / },
    { name: "an empty element", value: '["python3", ""]', error: /RELAY_COMMAND\.1: / },
    { name: "an empty array", value: "[]", error: /RELAY_COMMAND: must name at least the executable/ },
    { name: "the whole command in one element", value: '["python3 -m dynamo.pool_relay"]', error: /RELAY_COMMAND: the executable \(the first element\) contains whitespace/ },
  ])("refuses RELAY_COMMAND as $name, naming the variable", ({ value, error }) => {
    expect(() => parseConfig({ RELAY_COMMAND: value })).toThrow(error);
  });

  it("refuses an empty RELAY_COMMAND for its one fault only, not also for an executable it lacks", () => {
    expect(() => parseConfig({ RELAY_COMMAND: "[]" })).toThrow(/^invalid configuration: RELAY_COMMAND: must name at least the executable$/);
  });
});
