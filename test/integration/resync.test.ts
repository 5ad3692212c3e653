// The resync backstop: a status left waiting by a lost child event is repaired by the next tick of
// the real PingSource adapter. The test runs the PingSource every minute instead of every 10
// minutes. (What changed while the event source was down: test/integration/source.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { productManifests } from "../../dev/product.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { adminClient, eventually, freshNamespace } from "./helpers.ts";
import { appliedFor, invocations, send, statusQuiet } from "./knative-helpers.ts";
import { condition, getDpr, pingEvent, published, settledDpr } from "./pipeline-helpers.ts";

const PING = "poolrelay-resync";
let admin: KubeClient;
const pingSource = () =>
  productManifests(ensureBinaries().kubectl).find((o) => o.kind === "PingSource" && o.metadata.name === PING)!;

beforeAll(async () => {
  admin = await adminClient();
  const every = { ...pingSource(), spec: { ...(pingSource()["spec"] as object), schedule: "* * * * *" } };
  await admin.apply(every, "dynamo-pool-relay/test-install", { force: true });
});
afterAll(async () => {
  await admin.apply(pingSource(), "dynamo-pool-relay/test-install", { force: true });
});

describe("the resync", () => {
  it("repairs on the next tick a status left waiting by a lost child event, without waiting for the pair's periodic slot", async () => {
    const ns = await freshNamespace("settling");
    await published(ns);
    await settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True");
    await statusQuiet(ns);
    // As if the Deployment's last update had never reached status: Ready still waits on the rollout.
    const shown = await getDpr(admin, ns, "g1");
    const conditions = (shown.status!["conditions"] as { type: string }[]).map((c) =>
      c.type === "Ready"
        ? {
            ...c,
            status: "False",
            reason: "RolloutPending",
            message: "no Relay replica of the current Deployment generation is available yet",
          }
        : c,
    );
    const ticksBefore = invocations("eligibility").length;
    await admin.replaceStatus({ ...shown, status: { ...shown.status, conditions } });
    expect(condition(await getDpr(admin, ns, "g1"), "Ready")).toMatchObject({
      status: "False",
      reason: "RolloutPending",
    });
    await send(pingEvent());

    await settledDpr(ns, "g1", "is Ready again", (d) => condition(d, "Ready")?.status === "True", 120_000);
    // The tick logs its line when its emits are done, which can be after the reconcile they asked for.
    await eventually("the tick found the pair settling", async () =>
      invocations("eligibility")
        .slice(ticksBefore)
        .some((i) => i.decision === "Resync" && Number(i["settling"]) >= 1),
    );
    // Apply finds the children current and the status not showing them, so it shows it and reports.
    await appliedFor(ns, ["Resync"]);
  });
});
