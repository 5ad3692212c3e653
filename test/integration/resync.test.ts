// The backstops: a DynamoPoolRelay whose change event was lost (the event source was down when it
// was created, and a source sends nothing for objects that exist when it starts) is still
// published, by the source's requeue or the tick of the real PingSource adapter; a status left
// waiting by a lost child event is repaired by the next tick. The test runs the PingSource every
// minute instead of every 10 minutes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { PRODUCT_NAMESPACE, productManifests } from "../../dev/product.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { crash, runningContainer } from "../node-containers.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { appliedFor, invocations, send, sourcesSettled, statusQuiet } from "./knative-helpers.ts";
import { condition, getDpr, pingEvent, published, settledDpr } from "./pipeline-helpers.ts";

const PING = "poolrelay-resync";
const SOURCE = "sources.knative.dev/containerSource=poolrelay-source";
let admin: KubeClient;
const pingSource = () => productManifests(ensureBinaries().kubectl).find((o) => o.kind === "PingSource" && o.metadata.name === PING)!;

beforeAll(async () => {
  admin = await adminClient();
  const every = { ...pingSource(), spec: { ...(pingSource()["spec"] as object), schedule: "* * * * *" } };
  await admin.apply(every, "dynamo-pool-relay/test-install", { force: true });
});
afterAll(async () => {
  await admin.apply(pingSource(), "dynamo-pool-relay/test-install", { force: true });
});

describe("the resync", () => {
  it("publishes a DynamoPoolRelay whose creation event was lost, by the source's requeue or the next tick of the real PingSource", async () => {
    const ns = await freshNamespace("lost");
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await eventually("the DGD event was handled (no DynamoPoolRelay yet)", async () =>
      invocations("eligibility").some((i) => i.key?.namespace === ns && i.decision === "NoDynamoPoolRelay"));
    // The new namespace rolled the ApiServerSource adapter; old and new overlap for a few seconds and
    // both may send the DGD's event: let every copy be handled before the DynamoPoolRelay exists.
    await sourcesSettled(ns);
    await eventually("no more DGD events for the namespace", async () => {
      const before = invocations("eligibility").filter((i) => i.key?.namespace === ns).length;
      await new Promise((r) => setTimeout(r, 4000));
      return invocations("eligibility").filter((i) => i.key?.namespace === ns).length === before;
    });

    // The DynamoPoolRelay watch is down while the DynamoPoolRelay is created: its event is lost.
    const watch = await eventually("the watch's container running", () => runningContainer(admin, PRODUCT_NAMESPACE, SOURCE, "source"));
    crash(watch);
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    await eventually("the watch runs again", async () => ((await runningContainer(admin, PRODUCT_NAMESPACE, SOURCE, "source"))?.restartCount ?? 0) > watch.restartCount);

    // The source came back after the DynamoPoolRelay was created: its first list passes nothing
    // on, but it asks for the unobserved pair once it has been quiet for a quarter of REQUEUE_SECONDS (15 s),
    // and the tick (every minute here) asks too. Whichever comes first publishes it.
    const dpr = await settledDpr(ns, "g1", "is published by the resync or the source's requeue", (d) => condition(d, "ServicePublished")?.status === "True", 120_000);
    expect(dpr.status?.["observedGeneration"]).toBe(1);
    await appliedFor(ns, ["Resync", "Requeue"]);
    // Its add event never came (the source sends none of the status writes that followed, which
    // change no generation: shared/source-events.ts, sent).
    const dprEvents = invocations("apply").filter((i) => i.key?.namespace === ns && i.event.subject?.includes("/dynamopoolrelays/"));
    expect(dprEvents.filter((i) => i.event.type === "dev.knative.apiserver.resource.add")).toEqual([]);
  });

  it("repairs on the next tick a status left waiting by a lost child event, without waiting for the pair's periodic slot", async () => {
    const ns = await freshNamespace("settling");
    await published(ns);
    await settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True");
    await statusQuiet(ns);
    // As if the Deployment's last update had never reached status: Ready still waits on the rollout.
    const shown = await getDpr(admin, ns, "g1");
    const conditions = (shown.status!["conditions"] as { type: string }[]).map((c) =>
      c.type === "Ready" ? { ...c, status: "False", reason: "RolloutPending", message: "no Relay replica of the current Deployment generation is available yet" } : c);
    const ticksBefore = invocations("eligibility").length;
    await admin.replaceStatus({ ...shown, status: { ...shown.status, conditions } });
    expect(condition(await getDpr(admin, ns, "g1"), "Ready")).toMatchObject({ status: "False", reason: "RolloutPending" });
    await send(pingEvent());

    await settledDpr(ns, "g1", "is Ready again", (d) => condition(d, "Ready")?.status === "True", 120_000);
    // The tick logs its line when its emits are done, which can be after the reconcile they asked for.
    await eventually("the tick found the pair settling", async () =>
      invocations("eligibility").slice(ticksBefore).some((i) => i.decision === "Resync" && Number(i["settling"]) >= 1));
    // Apply finds the children current and the status not showing them, so it shows it and reports.
    await appliedFor(ns, ["Resync"]);
  });
});
