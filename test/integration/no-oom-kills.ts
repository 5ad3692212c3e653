// After every integration test file: no container of the product or of Knative was killed for going
// over its memory limit (OOMKilled), restarts included.
// (A check in the global teardown could not fail the run: vitest only prints teardown errors.)
import { afterAll, expect } from "vitest";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";
import { adminClient } from "./helpers.ts";

interface Pod {
  metadata: { namespace: string; name: string };
  status?: {
    containerStatuses?: {
      name: string;
      lastState?: { terminated?: { reason?: string } };
      state?: { terminated?: { reason?: string } };
    }[];
  };
}

afterAll(async () => {
  const admin = await adminClient();
  const pods = (
    await Promise.all(
      [PRODUCT_NAMESPACE, "knative-eventing", "knative-serving"].map((ns) => admin.list<Pod>("v1", "Pod", ns)),
    )
  ).flat();
  expect(pods.length).toBeGreaterThan(0);
  const killed = pods.flatMap((p) =>
    (p.status?.containerStatuses ?? [])
      .filter((c) => c.lastState?.terminated?.reason === "OOMKilled" || c.state?.terminated?.reason === "OOMKilled")
      .map((c) => `${p.metadata.namespace}/${p.metadata.name} ${c.name}`),
  );
  expect(killed, "containers killed over their memory limit (OOMKilled)").toEqual([]);
});
