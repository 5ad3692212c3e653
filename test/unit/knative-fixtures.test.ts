// The deliveries recorded from the real Knative flow (test/fixtures/knative/, kept current by
// test/integration/fixtures.test.ts) are what the functions parse: the strict CloudEvents parser
// accepts each as delivered, and each function's classifier takes the one meant for it.
import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fromHttp } from "../../shared/cloudevent.ts";
import { classifyForApply, classifyForEligibility, classifyForStatus } from "../../shared/classify.ts";
import { statusDigest } from "../../shared/seen-versions.ts";
import type { RecordedDelivery } from "../fixtures/knative/shape.ts";

const dir = new URL("../fixtures/knative/", import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, dir), "utf8")) as RecordedDelivery;
const parsed = (name: string) => {
  const { headers, body } = fixture(name);
  const r = fromHttp(headers, Buffer.from(body));
  if (!r.ok) throw new Error(`${name}: ${r.error}`);
  return r.value;
};

describe("recorded Knative deliveries", () => {
  it("are all here", () => {
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort(),
    ).toEqual([
      "apiserversource-dgd-add.json",
      "apiserversource-dgd-update.json",
      "broker-reconcile.json",
      "pingsource-tick.json",
      "source-dpr-add.json",
      "source-endpointslice-add.json",
    ]);
  });

  it.each(["apiserversource-dgd-add", "apiserversource-dgd-update"])(
    "eligibility takes %s as a DGD change of the object it names",
    (name) => {
      const event = parsed(name);
      const data = event.data as { metadata: { namespace: string; name: string; managedFields?: unknown[] } };
      expect(data.metadata.managedFields?.length).toBeGreaterThan(0);
      const key = { namespace: data.metadata.namespace, name: data.metadata.name };
      // The event also carries the object as the source saw it, as a hint for skipping a no-op.
      expect(classifyForEligibility(event)).toEqual({ ok: true, value: { kind: "dgd", key, observed: event.data } });
    },
  );

  it("apply takes source-dpr-add as a request of cause DPRChanged for the object it names", () => {
    const event = parsed("source-dpr-add");
    const data = event.data as { metadata: { namespace: string; name: string; managedFields?: unknown[] } };
    expect(data.metadata.managedFields?.length).toBeGreaterThan(0);
    expect(classifyForApply(event)).toEqual({
      ok: true,
      value: { namespace: data.metadata.namespace, name: data.metadata.name, cause: "DPRChanged" },
    });
  });

  it("eligibility takes the PingSource tick as a resync", () => {
    const event = parsed("pingsource-tick");
    expect(event.source).toBe("/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync");
    expect(classifyForEligibility(event)).toEqual({ ok: true, value: { kind: "resync" } });
  });

  it("status takes the EndpointSlice event as a change of the DynamoPoolRelay's children, one that adds no ready endpoint (a new Service's slice: endpoints null)", () => {
    const event = parsed("source-endpointslice-add");
    const labels = (event.data as { metadata: { labels: Record<string, string>; namespace: string; name: string } })
      .metadata;
    expect(classifyForStatus(event)).toEqual({
      ok: true,
      value: {
        key: { namespace: labels.namespace, name: labels.labels["app.kubernetes.io/instance"] },
        changed: ["EndpointSlice"],
        version: {
          kind: "EndpointSlice",
          name: labels.name,
          digest: statusDigest("EndpointSlice", event.data as Record<string, unknown>),
          resourceVersion: "2375",
        },
        addsNoEndpoint: true,
      },
    });
  });

  it("apply takes the reconcile request the Broker routed, with the Broker's own attributes on it", () => {
    const event = parsed("broker-reconcile");
    // The Broker stamps its arrival in RFC 3339 with up to nanoseconds, no earlier than the event's own time.
    const arrival = event.extensions["knativearrivaltime"];
    expect(arrival).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
    expect(Date.parse(arrival!)).toBeGreaterThanOrEqual(Date.parse(event.time!));
    expect(classifyForApply(event)).toMatchObject({ ok: true, value: { name: "g1" } });
  });
});
