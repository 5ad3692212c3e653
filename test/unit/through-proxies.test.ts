// The fault suite's edit of the product's objects (test/faults/through-proxies.ts), on knative/ as shipped.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../../shared/kube/client.ts";
import { throughProxies } from "../faults/through-proxies.ts";

const FILES = [
  "broker.yaml",
  "apiserversource.yaml",
  "pingsource.yaml",
  "source.yaml",
  "services.yaml",
  "triggers.yaml",
];
const objects = FILES.flatMap((f) =>
  parseAllDocuments(readFileSync(new URL(`../../knative/${f}`, import.meta.url), "utf8"))
    .map((d) => d.toJS() as KubeObject)
    .filter(Boolean),
);
const edited = throughProxies(objects, {
  apiServer: new URL("https://198.51.100.1:4443"),
  delivery: (ref) => `http://198.51.100.1:8080/${ref.kind}/${ref.namespace}/${ref.name}`,
});
const named = (kind: string) =>
  edited.filter((o) => o.kind === kind) as (KubeObject & { spec: Record<string, unknown> })[];

describe("the product through the fault suite's proxies", () => {
  it("points every function's in-cluster API address at the API fault proxy, once, keeping its own env", () => {
    const services = named("Service");
    expect(services.map((s) => s.metadata.name)).toEqual([
      "poolrelay-eligibility",
      "poolrelay-apply",
      "poolrelay-status",
      "poolrelay-dead-letter",
    ]);
    for (const s of services) {
      const env = (s.spec["template"] as { spec: { containers: { env: { name: string; value: string }[] }[] } }).spec
        .containers[0]!.env;
      expect(env.filter((e) => e.name.startsWith("KUBERNETES_SERVICE_"))).toEqual([
        { name: "KUBERNETES_SERVICE_HOST", value: "198.51.100.1" },
        { name: "KUBERNETES_SERVICE_PORT", value: "4443" },
      ]);
      expect(env.find((e) => e.name === "FUNCTION_TARGET")?.value).toBe(s.metadata.name.replace("poolrelay-", ""));
    }
  });

  it("delivers each Trigger to its function through the delivery proxy, and leaves its dead-letter sink", () => {
    for (const t of named("Trigger")) {
      expect(t.spec["subscriber"]).toEqual({
        uri: `http://198.51.100.1:8080/Service/dynamo-system/${t.metadata.name}`,
      });
      expect((t.spec["delivery"] as { deadLetterSink: unknown }).deadLetterSink).toEqual({
        ref: {
          apiVersion: "serving.knative.dev/v1",
          kind: "Service",
          name: "poolrelay-dead-letter",
          namespace: "dynamo-system",
        },
      });
    }
    expect(named("Trigger")).toHaveLength(3);
  });

  it("sends every source's events, and the resync's, into the Broker through the delivery proxy", () => {
    const sinks = edited.filter((o) => ["ApiServerSource", "PingSource", "SinkBinding"].includes(o.kind));
    // The SinkBindings: the resync's, the dead-letter function's, the event source's.
    expect(sinks.map((o) => o.kind).sort()).toEqual([
      "ApiServerSource",
      "PingSource",
      "SinkBinding",
      "SinkBinding",
      "SinkBinding",
    ]);
    for (const o of sinks)
      expect((o["spec"] as { sink: unknown }).sink).toEqual({
        uri: "http://198.51.100.1:8080/Broker/dynamo-system/dynamo-pool-relay",
      });
  });

  it("changes no other object, and none it was given", () => {
    const before = JSON.stringify(objects);
    throughProxies(objects, { apiServer: new URL("https://198.51.100.1:1"), delivery: () => "http://198.51.100.1:2/" });
    expect(JSON.stringify(objects)).toBe(before);
    const others = (list: KubeObject[]) =>
      list.filter((o) => !["Service", "Trigger", "ApiServerSource", "PingSource", "SinkBinding"].includes(o.kind));
    expect(others(edited).map((o) => o.kind)).toEqual(
      expect.arrayContaining(["Broker", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"]),
    );
    expect(others(edited)).toEqual(others(objects));
  });
});
