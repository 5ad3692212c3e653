// Delivery as docs/contract.md promises it, with the product's own Triggers and functions on the real
// Broker: a function's 503 (here: a real API server failure, an admission webhook that cannot be
// reached) is retried per its Trigger's delivery spec with the same event id, and the reply routes
// on once the API server recovers; exhausted retries and a 4xx (never retried) land in the
// dead-letter function.
import { readFileSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { randomUUID } from "node:crypto";
import { SOURCE as ELIGIBILITY_SOURCE } from "../../functions/eligibility/handler.ts";
import { EventType } from "../../shared/events.ts";
import type { CloudEvent } from "../../shared/cloudevent.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, eventually, freshNamespace } from "./helpers.ts";
import { chain, invocations, send, shownByApply, sourcesSettled } from "./knative-helpers.ts";
import { now, published, rollout, settledDpr } from "./pipeline-helpers.ts";

const OUTAGE = "test-configmap-outage";
let admin: KubeClient;
beforeAll(async () => {
  admin = await adminClient();
});
afterEach(async () => {
  await admin
    .request("DELETE", `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${OUTAGE}`)
    .catch(() => undefined);
});

interface Delivery {
  retry: number;
  deadLetterSink: { ref: { name: string } };
}

/** The apply Trigger's delivery spec in knative/triggers.yaml. */
function applyDelivery(): Delivery {
  const triggers = parseAllDocuments(readFileSync(new URL("../../knative/triggers.yaml", import.meta.url), "utf8")).map(
    (d) => d.toJS() as { metadata?: { name?: string }; spec: { delivery: Delivery } } | null,
  );
  return triggers.find((t) => t?.metadata?.name === "poolrelay-apply")!.spec.delivery;
}

/** ConfigMap writes in the namespace fail with 500: their admission webhook cannot be reached. */
async function configMapOutage(ns: string): Promise<void> {
  await admin.apply(
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: OUTAGE },
      webhooks: [
        {
          name: "outage.poolrelay.test",
          clientConfig: { url: "https://127.0.0.1:9/validate" },
          rules: [
            { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"] },
          ],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          timeoutSeconds: 1,
        },
      ],
    },
    TEST_MANAGER,
    { force: true },
  );
  const probe = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "outage-probe", namespace: ns } };
  await eventually("ConfigMap writes fail", async () =>
    admin.apply(probe, TEST_MANAGER).then(
      () => false,
      () => true,
    ),
  );
}

/**
 * The reconcile request eligibility sent for the DGD rollout, once apply has answered it `status`
 * `times` times. (Status also asks for reconciles when it sees drift; those it may send again.)
 */
async function reconcileAnswered(ns: string, times: number, status: number) {
  return eventually(
    `apply answered eligibility's reconcile request of ${ns} ${status} ${times} times`,
    async () => {
      const answers = invocations("apply").filter(
        (i) => i.event.subject === `${ns}/g1` && i.event.source === ELIGIBILITY_SOURCE && i.status === status,
      );
      const byId = Map.groupBy(answers, (i) => i.event.id);
      return [...byId.values()].find((a) => a.length >= times);
    },
    90_000,
  );
}

/** The dead-letter function's record of an event a Trigger gave up on (with Knative's error attributes). */
const deadLettered = (id: string) =>
  invocations("dead-letter").find((i) => i.event.id === id && i["code"] !== undefined);

describe("delivery through the product's Triggers", () => {
  it("retries the apply function's 503 with the same event id, and shows the rollout once the API server recovers", async () => {
    const ns = await freshNamespace("retry");
    await published(ns);
    await sourcesSettled(ns);
    await configMapOutage(ns);
    await rollout(ns, ["aaaa1111"]);
    const failed = await reconcileAnswered(ns, 2, 503);
    expect(failed[0]!.error).toMatch(/failed calling webhook/);
    await admin.request("DELETE", `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${OUTAGE}`);
    const id = failed[0]!.event.id;
    const steps = await eventually(
      "the retried request succeeds and its chain is handled",
      async () => chain(id),
      90_000,
    );
    expect(steps[0]).toMatchObject({ function: "apply", decision: "Applied" });
    // Apply shows the rollout itself, and its report then goes to no function (knative/triggers.yaml);
    // only a status write lost to a concurrent one leaves it to status.
    const shown = shownByApply(steps[0]!.reply!);
    expect(steps.map((i) => `${i.function}:${i.status < 300 ? "2xx" : i.status}`)).toEqual(
      shown ? ["apply:2xx"] : ["apply:2xx", "status:2xx"],
    );
    await settledDpr(ns, "g1", "lists the new worker namespace", (d) =>
      (d.status?.["workerNamespaces"] ?? []).some((w: string) => w.endsWith("-aaaa1111")),
    );
    expect(
      invocations("apply")
        .filter((i) => i.event.id === id)
        .map((i) => i.status)
        .slice(0, 2),
    ).toEqual([503, 503]);
  });

  it("dead-letters a request whose retries are exhausted: the Trigger's retry count plus the first attempt", async () => {
    const { retry, deadLetterSink } = applyDelivery();
    expect(deadLetterSink.ref.name).toBe("poolrelay-dead-letter");
    const ns = await freshNamespace("exhaust");
    await published(ns);
    await sourcesSettled(ns);
    await configMapOutage(ns);
    await rollout(ns, ["cccc3333"]);
    const id = (await reconcileAnswered(ns, 1, 503))[0]!.event.id;
    const dead = await eventually("the dead-letter function received it", async () => deadLettered(id), 120_000);
    expect(dead).toMatchObject({
      decision: "DeadLettered",
      code: "503",
      destination: "http://poolrelay-apply.dynamo-system.svc.cluster.local",
    });
    expect(
      invocations("apply")
        .filter((i) => i.event.id === id)
        .map((i) => i.status),
    ).toEqual(Array(retry + 1).fill(503));
  });

  it("does not retry a 4xx: a request with invalid data is answered 422 once and dead-lettered", async () => {
    const bad: CloudEvent = {
      specversion: "1.0",
      id: randomUUID(),
      type: EventType.Reconcile,
      source: "/test",
      time: now(),
      datacontenttype: "application/json",
      extensions: {},
      data: { namespace: "team-a", cause: "Resync" },
    };
    await send(bad);
    const dead = await eventually("the dead-letter function received it", async () => deadLettered(bad.id));
    expect(dead).toMatchObject({ code: "422" });
    expect(String(dead["response"])).toMatch(/name/);
    expect(
      invocations("apply")
        .filter((i) => i.event.id === bad.id)
        .map((i) => i.status),
    ).toEqual([422]);
  });
});
