// Which function each event reaches, by the Triggers of knative/triggers.yaml evaluated as
// Knative's Broker filter evaluates its `filters` dialects (exact, prefix, suffix, all, any, not)
// on the CloudEvent's attributes: the recorded deliveries of the real sources, and the product's
// own replies as productEvent makes them. Two shortcuts live only in these filters (docs/shortcuts.md):
// status is not woken for the adds of the children apply creates, nor for a report whose status
// apply wrote itself.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { EventType, productEvent } from "../../shared/events.ts";
import type { RecordedDelivery } from "../fixtures/knative/shape.ts";

type Filter = {
  exact?: Record<string, string>;
  prefix?: Record<string, string>;
  suffix?: Record<string, string>;
  all?: Filter[];
  any?: Filter[];
  not?: Filter;
  cesql?: string;
};
type Attributes = Record<string, string>;

/** One dialect expression, as eventing's pkg/eventfilter/subscriptionsapi evaluates it. */
function matches(filter: Filter, event: Attributes): boolean {
  const keys = Object.keys(filter);
  if (keys.length !== 1)
    throw new Error(`a filter expression has exactly one dialect, got ${keys.join(", ") || "none"}`);
  const each = (pairs: Record<string, string>, test: (value: string, want: string) => boolean) =>
    Object.entries(pairs).every(([attribute, want]) => event[attribute] !== undefined && test(event[attribute], want));
  if (filter.exact) return each(filter.exact, (v, w) => v === w);
  if (filter.prefix) return each(filter.prefix, (v, w) => v.startsWith(w));
  if (filter.suffix) return each(filter.suffix, (v, w) => v.endsWith(w));
  if (filter.all) return filter.all.every((f) => matches(f, event));
  if (filter.any) return filter.any.some((f) => matches(f, event));
  if (filter.not) return !matches(filter.not, event);
  throw new Error(`a dialect this test does not evaluate: ${keys[0]}`);
}

interface Trigger {
  kind: string;
  spec: { filter?: { attributes?: object }; filters: Filter[]; subscriber: { ref: { name: string } } };
}
const triggers = parseAllDocuments(readFileSync(new URL("../../knative/triggers.yaml", import.meta.url), "utf8"))
  .map((d) => d.toJS() as Trigger | null)
  .filter((d): d is Trigger => d?.kind === "Trigger");

/** The functions whose Trigger passes the event: every expression of `filters` must match. */
const delivered = (event: Attributes) =>
  triggers
    .filter((t) => t.spec.filters.every((f) => matches(f, event)))
    .map((t) => t.spec.subscriber.ref.name.replace(/^poolrelay-/, ""))
    .sort();

const recorded = (file: string): Attributes => {
  const d = JSON.parse(
    readFileSync(new URL(`../fixtures/knative/${file}`, import.meta.url), "utf8"),
  ) as RecordedDelivery;
  return Object.fromEntries(
    Object.entries(d.headers)
      .filter(([k]) => k.startsWith("ce-"))
      .map(([k, v]) => [k.slice(3), v]),
  );
};
/** The recorded EndpointSlice add, as the same source sends it for another kind or change. */
const child = (kind: string, change: "add" | "update" | "delete"): Attributes => ({
  ...recorded("source-endpointslice-add.json"),
  kind,
  type: `dev.knative.apiserver.resource.${change}`,
});
const reply = (type: (typeof EventType)[keyof typeof EventType], data: object): Attributes => {
  const e = productEvent(type as never, data as never, {
    source: "/dynamo-pool-relay/apply",
    cause: "c",
    time: "2026-12-01T00:00:00Z",
  });
  return { type: e.type, source: e.source, id: e.id, specversion: e.specversion, ...(e.extensions as Attributes) };
};
const key = { namespace: "team-a", name: "g1", uid: "u1", generation: 1 };

describe("the Triggers' filters", () => {
  it("use only the new filters, with an empty legacy filter", () => {
    expect(triggers).toHaveLength(3);
    for (const t of triggers) expect(t.spec.filter?.attributes ?? {}).toEqual({});
  });

  it("have a recorded delivery of every source to check against", () => {
    expect(
      readdirSync(new URL("../fixtures/knative/", import.meta.url))
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

  const cases: [string, Attributes, string[]][] = [
    ["a DGD add", recorded("apiserversource-dgd-add.json"), ["eligibility"]],
    ["a DGD update", recorded("apiserversource-dgd-update.json"), ["eligibility"]],
    ["a DynamoPoolRelay add, from the product's event source", recorded("source-dpr-add.json"), ["apply"]],
    ["the resync tick", recorded("pingsource-tick.json"), ["eligibility"]],
    ["a reconcile request", recorded("broker-reconcile.json"), ["apply"]],
    ["an EndpointSlice add", recorded("source-endpointslice-add.json"), ["status"]],
    ["an EndpointSlice update", child("EndpointSlice", "update"), ["status"]],
    ["an EndpointSlice delete", child("EndpointSlice", "delete"), ["status"]],
    ...["ConfigMap", "Deployment", "Service"].flatMap((kind): [string, Attributes, string[]][] => [
      [`a ${kind} update`, child(kind, "update"), ["status"]],
      [`a ${kind} delete`, child(kind, "delete"), ["status"]],
      [`a ${kind} add (apply made it, and shows or reports it)`, child(kind, "add"), []],
    ]),
    ["a ServiceAccount update (a kind no Trigger takes)", child("ServiceAccount", "update"), []],
    ["apply's applied.v1", reply(EventType.Applied, { ...key, applied: [], unchanged: [], skipped: [] }), ["status"]],
    [
      "apply's applied.v1 whose status apply wrote",
      reply(EventType.Applied, { ...key, applied: [], unchanged: [], skipped: [], statusWritten: true }),
      [],
    ],
    [
      "apply's withdrawn.v1",
      reply(EventType.Withdrawn, { ...key, reason: "DGDNotFound", message: "m", service: "deleted" }),
      ["status"],
    ],
    [
      "apply's withdrawn.v1 whose status apply wrote",
      reply(EventType.Withdrawn, {
        ...key,
        reason: "DGDNotFound",
        message: "m",
        service: "deleted",
        statusWritten: true,
      }),
      [],
    ],
    ["apply's rejected.v1", reply(EventType.Rejected, { ...key, reason: "InvalidSpec", message: "m" }), ["status"]],
  ];
  it.each(cases)("deliver %s to %j", (_what, event, expected) => {
    expect(delivered(event)).toEqual(expected);
  });
});
