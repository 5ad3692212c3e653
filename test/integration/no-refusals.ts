// After every integration test file: the cluster-address proxy refused nothing so far. Nothing may
// leave 127.0.0.0/8, and every address the product and Knative use must be one this host serves.
// (A check in the global teardown could not fail the run: vitest only prints teardown errors.)
import { afterAll, expect, inject } from "vitest";
import { proxyRefusals } from "../../dev/knative/index.ts";

afterAll(() => {
  expect(proxyRefusals(inject("controlPlaneDir")), "addresses the cluster-address proxy refused").toEqual([]);
});
