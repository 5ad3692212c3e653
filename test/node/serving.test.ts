// The product as a user installs it (`kubectl kustomize knative/`, with the images built here) under
// the real Knative Serving and Eventing on the real node: Knative's webhooks admit every object,
// its controllers make them Ready, the autoscaler takes each function to zero pods when idle, and
// an event sent to a function at zero is answered through Traefik and the activator by a new pod.
import { describe, expect, it } from "vitest";
import { postToService } from "../../dev/node/product-services.ts";
import { toBinary } from "../../shared/cloudevent.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { adminClient, eventually } from "../integration/helpers.ts";
import { installedProduct } from "./installed.ts";

interface Pods {
  items: { metadata: { name: string; deletionTimestamp?: string }; status?: { phase?: string } }[];
}

describe("the product's functions on Knative Serving", () => {
  it(
    "are admitted and go Ready, scale to zero when idle, and answer an event from zero through the activator",
    { timeout: 720_000 },
    async () => {
      const client = await adminClient();
      // Everything in knative/, admitted by Knative's own webhooks, Ready under its own controllers.
      const objects = await installedProduct(client);
      const services = objects.filter((o) => o.apiVersion === "serving.knative.dev/v1" && o.kind === "Service");
      expect(services.map((s) => s.metadata.name).sort()).toEqual([
        "poolrelay-apply",
        "poolrelay-dead-letter",
        "poolrelay-eligibility",
        "poolrelay-status",
      ]);

      const namespace = services[0]!.metadata.namespace!;
      const podsOf = async (service: string) =>
        (
          await client.list<Pods["items"][number]>("v1", "Pod", namespace, `serving.knative.dev/service=${service}`)
        ).filter((p) => !p.metadata.deletionTimestamp);
      // Presence first: each revision ran a pod of its own before it was idle.
      for (const s of services) {
        const ksvc = await client.get<{ status?: { latestReadyRevisionName?: string } }>({
          apiVersion: s.apiVersion,
          kind: s.kind,
          namespace,
          name: s.metadata.name,
        });
        expect(ksvc?.status?.latestReadyRevisionName).toMatch(new RegExp(`^${s.metadata.name}-`));
      }
      // Idle: the window (10 s) and the scale-to-zero grace period (30 s) pass, then the pods go.
      for (const s of services)
        await eventually(
          `${s.metadata.name} at zero pods`,
          async () => (await podsOf(s.metadata.name)).length === 0,
          180_000,
        );

      // A function at zero answers through Traefik (the Route's ExternalName) and the activator.
      const { headers, body } = toBinary(
        productEvent(
          EventType.Reconcile,
          { namespace: "team-a", name: "g1", cause: "Drift" },
          { source: "/test/node", cause: "c", time: "2026-03-01T00:00:00Z" },
        ),
      );
      // The Host a pod's request carries after its DNS lookup of the function's cluster-local name.
      const status = await postToService(client, `poolrelay-dead-letter.${namespace}.svc.cluster.local`, headers, body);
      expect(status).toBe(204);
      expect((await podsOf("poolrelay-dead-letter")).length).toBe(1);
    },
  );
});
