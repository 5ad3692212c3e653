// The deliveries the unit tests feed to the functions (test/fixtures/knative/*.json) are recorded
// here from the real flow: the ApiServerSource, the product's event source, the PingSource, and a
// reply routed by the Broker, as a Trigger subscriber receives them. This test records them again
// and fails when their shape changed (a header added or gone, an attribute in another form, the
// body's structure); UPDATE_FIXTURES=1 writes the new recordings instead.
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { productManifests } from "../../dev/product.ts";
import type { Delivery } from "../../dev/tap.ts";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { eventHeaders, shape, type RecordedDelivery } from "../fixtures/knative/shape.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { sourcesSettled, statusQuiet, tapBroker, type TestTap } from "./knative-helpers.ts";
import { condition, rollout, settledDpr } from "./pipeline-helpers.ts";

const FIXTURES = new URL("../fixtures/knative/", import.meta.url);
let admin: KubeClient;
let tap: TestTap;
const pingSource = () => productManifests(ensureBinaries().kubectl).find((o) => o.kind === "PingSource")!;

beforeAll(async () => {
  admin = await adminClient();
  tap = await tapBroker("test-fixtures-tap");
  await admin.apply(
    { ...pingSource(), spec: { ...(pingSource()["spec"] as object), schedule: "* * * * *" } },
    "dynamo-pool-relay/test-install",
    { force: true },
  );
});
afterAll(async () => {
  await admin.apply(pingSource(), "dynamo-pool-relay/test-install", { force: true });
  await tap?.stop();
});

const h = (d: Delivery, name: string) => d.headers[name];

describe("recorded deliveries", () => {
  it("still have the shape the functions' unit tests were written against", async () => {
    const ns = await freshNamespace("fixtures");
    // The adapter rolls for a new namespace and sends nothing for what changes meanwhile.
    await sourcesSettled(ns);
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    // As a user writes one: without the placement on kwok's node the other tests add, which the
    // recorded body would show. Its Relay pods cannot pull their image here; the namespace goes after.
    const { nodeSelector: _n, tolerations: _t, ...spec } = dprObject(ns, "g1")["spec"] as Record<string, unknown>;
    await admin.apply({ ...dprObject(ns, "g1"), spec }, TEST_MANAGER);
    await rollout(ns, ["aaaa1111"]);
    // The source holds a pair's child events until its first status and then sends them as one,
    // which names the others in a `covers` extension: the EndpointSlice's first add may leave so.
    // Its plain add is recorded from a slice the endpoint controller makes again once the pair has a
    // status and its events are handled.
    await settledDpr(ns, "g1", "has a status", (d) => condition(d, "Eligible") !== undefined);
    await statusQuiet(ns);
    // A DynamoPoolRelay's add goes to apply itself: eligibility replies to a DGD change the status
    // does not show yet, which a rollout after the first status always is.
    await rollout(ns, ["bbbb2222"]);
    const first = await admin.list<KubeObject>(
      "discovery.k8s.io/v1",
      "EndpointSlice",
      ns,
      "kubernetes.io/service-name=g1-pool-relay",
    );
    expect(first.length).toBeGreaterThan(0);
    for (const slice of first)
      await admin.deleteExact(
        { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", namespace: ns, name: slice.metadata.name },
        slice.metadata.uid!,
      );
    const deleted = new Set(first.map((s) => s.metadata.name));
    const wanted: Record<string, { about: string; match: (d: Delivery) => boolean }> = {
      "apiserversource-dgd-add": {
        about: "ApiServerSource (Resource mode): a DynamoGraphDeployment was added",
        match: (d) =>
          h(d, "ce-type") === "dev.knative.apiserver.resource.add" &&
          h(d, "ce-kind") === "DynamoGraphDeployment" &&
          h(d, "ce-namespace") === ns,
      },
      "apiserversource-dgd-update": {
        about: "ApiServerSource (Resource mode): a DynamoGraphDeployment's status changed",
        match: (d) =>
          h(d, "ce-type") === "dev.knative.apiserver.resource.update" &&
          h(d, "ce-kind") === "DynamoGraphDeployment" &&
          h(d, "ce-namespace") === ns,
      },
      "source-dpr-add": {
        about: "the product's event source (a ContainerSource): a DynamoPoolRelay was added",
        match: (d) =>
          h(d, "ce-type") === "dev.knative.apiserver.resource.add" &&
          h(d, "ce-kind") === "DynamoPoolRelay" &&
          h(d, "ce-namespace") === ns,
      },
      "source-endpointslice-add": {
        about: "the product's event source (a ContainerSource): the Relay Service's EndpointSlice was added",
        match: (d) =>
          h(d, "ce-type") === "dev.knative.apiserver.resource.add" &&
          h(d, "ce-kind") === "EndpointSlice" &&
          h(d, "ce-namespace") === ns &&
          !deleted.has(String(h(d, "ce-name"))) &&
          h(d, "ce-covers") === undefined,
      },
      "broker-reconcile": {
        about: "eligibility's reply, routed by the Broker to apply",
        match: (d) =>
          h(d, "ce-type") === "com.nvidia.dynamo.poolrelay.reconcile.v1" &&
          h(d, "ce-subject") === `${ns}/g1` &&
          h(d, "ce-source") === "/dynamo-pool-relay/eligibility",
      },
      "pingsource-tick": {
        about: "PingSource poolrelay-resync: a resync tick",
        match: (d) => h(d, "ce-type") === "dev.knative.sources.ping",
      },
    };
    const missing = () =>
      Object.entries(wanted)
        .filter(([, w]) => !tap.deliveries.some(w.match))
        .map(([name]) => name);
    await eventually("a delivery of every kind was recorded", async () => missing().length === 0, 100_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}; none yet of ${missing().join(", ")}`);
      },
    );
    const live = Object.fromEntries(Object.entries(wanted).map(([name, w]) => [name, tap.deliveries.find(w.match)!]));
    for (const [name, delivery] of Object.entries(live)) {
      const recorded: RecordedDelivery = {
        about: wanted[name]!.about,
        headers: eventHeaders(delivery.headers),
        body: delivery.body,
      };
      const file = new URL(`${name}.json`, FIXTURES);
      if (process.env["UPDATE_FIXTURES"] === "1") writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
      const fixture = JSON.parse(readFileSync(file, "utf8")) as RecordedDelivery;
      expect(shape(recorded), name).toEqual(shape(fixture));
    }
    await admin.request("DELETE", `/api/v1/namespaces/${ns}`);
  });
});
