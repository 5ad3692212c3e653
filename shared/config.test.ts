import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.ts";

describe("parseConfig", () => {
  it("has defaults for everything but the sink", () => {
    expect(parseConfig({})).toEqual({ defaults: { discoveryBackend: "kubernetes" }, resyncPeriodSeconds: 60, resyncSlots: 10, sink: undefined, dgdApiVersion: "nvidia.com/v1beta1", deadlineSeconds: 20 });
  });

  it("reads every variable", () => {
    expect(parseConfig({ DEFAULT_DISCOVERY_BACKEND: "etcd", RESYNC_PERIOD_SECONDS: "30", RESYNC_SLOTS: "4", K_SINK: "http://broker/ns/b", DGD_API_VERSION: "nvidia.com/v1alpha1", INVOCATION_DEADLINE_SECONDS: "8" })).toEqual({
      defaults: { discoveryBackend: "etcd" }, resyncPeriodSeconds: 30, resyncSlots: 4, sink: "http://broker/ns/b", dgdApiVersion: "nvidia.com/v1alpha1", deadlineSeconds: 8,
    });
  });

  it("lists every bad variable in one error", () => {
    expect(() => parseConfig({ DEFAULT_DISCOVERY_BACKEND: "zk", RESYNC_SLOTS: "0", K_SINK: "not a url" })).toThrow(/DEFAULT_DISCOVERY_BACKEND: .*; RESYNC_SLOTS: .*; K_SINK: /);
  });
});
