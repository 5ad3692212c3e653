// The whole product on the real node, as a user runs it: a DynamoPoolRelay and its DGD, applied,
// reach the functions through the real ApiServerSource and the product's event source, the Broker's
// ingress, the InMemoryChannel dispatcher and the filter, all pods; the functions, woken from zero
// by the activator, write the children and the status.
import { describe, expect, it } from "vitest";
import { adminClient, freshNamespace } from "../integration/helpers.ts";
import { installedProduct } from "./installed.ts";
import { children, CHILD_REFS, condition, published } from "../integration/pipeline-helpers.ts";

describe("the product on the real node", () => {
  it("reconciles a new DynamoPoolRelay through Eventing's and Serving's pods", { timeout: 420_000 }, async () => {
    const client = await adminClient();
    await installedProduct(client);
    const ns = await freshNamespace("real-node");
    const dpr = await published(ns);
    expect(dpr.status?.["serviceEndpoint"]).toBe(`g1-pool-relay.${ns}.svc:5561`);
    expect(condition(dpr, "Eligible")).toMatchObject({ status: "True", reason: "Eligible" });
    const objs = await children(client, ns);
    for (const [, kind] of CHILD_REFS)
      expect(objs[kind]!.metadata.ownerReferences![0], kind).toMatchObject({
        kind: "DynamoPoolRelay",
        name: "g1",
        uid: dpr.metadata.uid,
      });
  });
});
