// After every integration test file: the cluster-address proxy refused nothing so far (nothing may
// leave 127.0.0.0/8, and every address the product and Knative use must be one this host serves),
// and no process went over its container's memory limit.
// (A check in the global teardown could not fail the run: vitest only prints teardown errors.)
import { afterAll, expect, inject } from "vitest";
import { proxyRefusals, workloadStates } from "../../dev/knative/index.ts";

afterAll(() => {
  expect(proxyRefusals(inject("controlPlaneDir")), "addresses the cluster-address proxy refused").toEqual([]);
  // Nor did the kernel kill any process for going over its container's memory limit.
  const states = workloadStates(inject("controlPlaneDir"));
  expect(states.length).toBeGreaterThan(0);
  expect(states.filter((w) => w.oomKills > 0).map((w) => `${w.workload}: ${w.oomKills}`), "processes killed over their memory limit (OOMKilled)").toEqual([]);
});
