// Kubernetes Events and trace context on the real Knative Eventing: the functions, running as their
// ServiceAccounts with RBAC on, write core/v1 Events that the built kubectl's `describe dpr` shows,
// one per transition also when reconciles arrive duplicated and concurrently, and a trace context
// sent with a DGD change comes out of all three functions' log lines.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import type { KubeEvent } from "../../shared/k8s-events.ts";
import type { KubeClient } from "../../shared/kube/client.ts";
import { TEST_MANAGER, adminClient, dgdObject, dprObject, eventually, freshNamespace } from "./helpers.ts";
import { brokerIngress, chain, invocations, send } from "./knative-helpers.ts";
import { condition, getDpr, now, published, settledDpr, type Dpr } from "./pipeline-helpers.ts";

let admin: KubeClient;
beforeAll(async () => {
  admin = await adminClient();
});

/** The Events about this DynamoPoolRelay, found as kubectl describe finds them. */
async function dprEvents(dpr: Dpr): Promise<KubeEvent[]> {
  const { name, namespace, uid } = dpr.metadata;
  const selector = `involvedObject.kind=DynamoPoolRelay,involvedObject.name=${name},involvedObject.namespace=${namespace},involvedObject.uid=${uid}`;
  const list = (await admin.request(
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent(selector)}`,
  )) as { items: KubeEvent[] };
  return list.items;
}

const reasons = (events: readonly KubeEvent[]) => events.map((e) => e.reason);
const count = (events: readonly KubeEvent[], reason: string) => events.filter((e) => e.reason === reason).length;

function kubectl(...args: string[]) {
  return spawnSync(ensureBinaries().kubectl, [`--kubeconfig=${inject("kubeconfig")}`, ...args], { encoding: "utf8" });
}

const reconcile = (ns: string) =>
  productEvent(
    EventType.Reconcile,
    { namespace: ns, name: "g1", cause: "DGDChanged" },
    { source: "/test", cause: randomUUID(), time: now() },
  );
const ready = (ns: string) => settledDpr(ns, "g1", "is Ready", (d) => condition(d, "Ready")?.status === "True");

describe("Kubernetes Events", () => {
  it("shows in kubectl describe dpr what happened: Published and Ready, Withdrawn and NotReady, and again Published and Ready", async () => {
    const ns = await freshNamespace("k8s-events");
    await published(ns);
    const dpr = await ready(ns);
    await eventually("Published and Ready are reported", async () => {
      const r = reasons(await dprEvents(dpr));
      return r.includes("Published") && r.includes("Ready");
    });

    const describe = kubectl("describe", "dpr", "g1", "-n", ns);
    expect(describe.status, describe.stderr).toBe(0);
    const events = describe.stdout.slice(describe.stdout.indexOf("\nEvents:"));
    expect(events).toMatch(
      /Normal\s+Published\s+\S+\s+dynamo-pool-relay\/apply\s+Service g1-pool-relay published; applied /,
    );
    // From whichever function wrote the status that turned Ready True: status, or apply when its
    // reconcile found the pods Ready before status had shown them.
    expect(events).toMatch(
      /Normal\s+Ready\s+\S+\s+dynamo-pool-relay\/(status|apply)\s+Ready is True: the Relay listens at g1-pool-relay\./,
    );

    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    await settledDpr(ns, "g1", "is withdrawn", (d) => condition(d, "ServicePublished")?.reason === "Withdrawn");
    const withdrawn = await eventually("Withdrawn and NotReady are reported", async () => {
      const all = await dprEvents(dpr);
      return count(all, "Withdrawn") === 1 && count(all, "NotReady") === 1 ? all : undefined;
    });
    expect(withdrawn.find((e) => e.reason === "Withdrawn")).toMatchObject({
      type: "Normal",
      source: { component: "dynamo-pool-relay/apply" },
      message: expect.stringMatching(/^Service g1-pool-relay withdrawn: /) as unknown,
    });
    // From apply, which shows the withdrawal's status itself, or status when apply's write lost to it.
    expect(withdrawn.find((e) => e.reason === "NotReady")).toMatchObject({
      type: "Warning",
      source: { component: expect.stringMatching(/^dynamo-pool-relay\/(apply|status)$/) as unknown },
      message: expect.stringMatching(/^Ready is False \(NotEligible\): /) as unknown,
    });

    // The same decision again, for the same generation: a new Service object, so a new Event.
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await ready(ns);
    const all = await eventually("Published and Ready are reported again", async () => {
      const e = await dprEvents(dpr);
      return count(e, "Published") === 2 && count(e, "Ready") === 2 ? e : undefined;
    });
    expect({ withdrawn: count(all, "Withdrawn"), notReady: count(all, "NotReady") }).toEqual({
      withdrawn: 1,
      notReady: 1,
    });
    for (const e of all) {
      expect(e.involvedObject).toEqual({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        name: "g1",
        namespace: ns,
        uid: dpr.metadata.uid,
      });
      expect(e).toMatchObject({
        count: 1,
        reportingComponent: e.source.component,
        metadata: { name: expect.stringMatching(/^g1\.[0-9a-f]{16}$/) as unknown },
      });
    }
    // Every Event write the functions logged for this namespace succeeded (RBAC allows it, the API server accepts it).
    // A function logs its line after its writes: the last line can come a moment after its Event.
    const outcomes = await eventually("every Event write logged", async () => {
      const o = (["apply", "status"] as const)
        .flatMap((fn) => invocations(fn))
        .filter((i) => i.key?.namespace === ns)
        .flatMap((i) => (i["kubeEvents"] ?? []) as { outcome: string }[]);
      return o.length >= all.length ? o : undefined;
    });
    expect(outcomes.filter((o) => o.outcome === "failed")).toEqual([]);
  });

  it("writes one Event per transition when reconciles arrive duplicated and concurrently, and none when nothing changes", async () => {
    const ns = await freshNamespace("k8s-events-dup");
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await admin.apply(dprObject(ns, "g1"), TEST_MANAGER);
    // Several applies race to publish, as the DGD's and the DynamoPoolRelay's own events do.
    const first = reconcile(ns);
    const publishing = [first, reconcile(ns), reconcile(ns)];
    await Promise.all([send(first), send(first, "structured"), ...publishing.map((e) => send(e))]);
    const dpr = await ready(ns);
    await eventually("Published and Ready are reported", async () => {
      const r = reasons(await dprEvents(dpr));
      return r.includes("Published") && r.includes("Ready");
    });

    // Several applies race to withdraw, several status invocations to report Ready turning False.
    await admin.request("DELETE", `/apis/nvidia.com/v1beta1/namespaces/${ns}/dynamographdeployments/g1`);
    const withdrawing = [reconcile(ns), reconcile(ns), reconcile(ns)];
    await Promise.all(withdrawing.map((e) => send(e)));
    await settledDpr(
      ns,
      "g1",
      "is withdrawn",
      (d) => condition(d, "ServicePublished")?.reason === "Withdrawn" && condition(d, "Ready")?.status === "False",
    );
    const events = await eventually("Withdrawn and NotReady are reported", async () => {
      const all = await dprEvents(dpr);
      return reasons(all).includes("Withdrawn") && reasons(all).includes("NotReady") ? all : undefined;
    });
    // Every racer has finished, down to the status invocations its reply caused, before counting.
    await eventually("every racing reconcile is handled", async () =>
      [...publishing, ...withdrawing].every((e) => chain(e.id) !== undefined),
    );
    const settled = await dprEvents(dpr);
    expect(
      Object.fromEntries(["Published", "Ready", "Withdrawn", "NotReady"].map((r) => [r, count(settled, r)])),
    ).toEqual({ Published: 1, Ready: 1, Withdrawn: 1, NotReady: 1 });
    expect(settled.map((e) => e.metadata.name).sort()).toEqual(events.map((e) => e.metadata.name).sort());

    // Nothing changes: duplicates reconcile, write nothing, report nothing.
    const steady = reconcile(ns);
    // Only duplicates of one event at once: one of them runs, so its chain carries the reply (a
    // request with another id could be the run both duplicates share).
    await Promise.all([send(steady), send(steady)]);
    const steps = await eventually("the duplicates are handled", async () => chain(steady.id));
    const another = reconcile(ns);
    await send(another);
    expect(
      (await eventually("another request is handled", async () => chain(another.id))).map((i) => i.writes),
    ).toEqual([0]);
    // The status shows the withdrawal already: apply has nothing to report, and no status run follows.
    expect(steps.map((i) => `${i.function}:${i.decision}`)).toEqual(["apply:Converged"]);
    expect(steps.map((i) => i.writes)).toEqual([0]);
    expect(steps.filter((i) => i["kubeEvents"] !== undefined)).toEqual([]);
    expect((await dprEvents(dpr)).map((e) => e.metadata.name).sort()).toEqual(
      settled.map((e) => e.metadata.name).sort(),
    );
    expect((await getDpr(admin, ns, "g1")).metadata.uid).toBe(dpr.metadata.uid);
  });
});

describe("W3C trace context", () => {
  it("follows one DGD change through eligibility, apply and status by its trace-id, across the Broker", async () => {
    const ns = await freshNamespace("trace");
    // A pair whose Deployment the API server refuses: apply answers every reconcile with a
    // rejected.v1 report, which status always takes (a report apply showed itself goes nowhere:
    // knative/triggers.yaml), so the trace crosses all three functions.
    await admin.apply(dgdObject(ns, "g1"), TEST_MANAGER);
    await admin.apply(dprObject(ns, "g1", { tolerations: [{ key: "gpu", operator: "Bogus" }] }), TEST_MANAGER);
    await eventually(
      "Ready=False ApplyFailed",
      async () => condition(await getDpr(admin, ns, "g1"), "Ready")?.reason === "ApplyFailed",
    );
    const trace = randomUUID().replaceAll("-", "");
    const traceparent = `00-${trace}-00f067aa0ba902b7-01`;
    const dgdChange: CloudEvent = {
      specversion: "1.0",
      id: randomUUID(),
      type: "dev.knative.apiserver.resource.update",
      source: "/test",
      time: now(),
      extensions: { kind: "DynamoGraphDeployment", traceparent, tracestate: "test=1" },
      datacontenttype: "application/json",
      data: {
        apiVersion: "nvidia.com/v1beta1",
        kind: "DynamoGraphDeployment",
        metadata: { name: "g1", namespace: ns },
      },
    };
    // As a traced producer sends it: the extension and the W3C header, so the trace is the same
    // whether or not Knative continues the header.
    const { headers, body } = toBinary(dgdChange);
    const res = await fetch(brokerIngress(), {
      method: "POST",
      headers: { ...headers, traceparent, tracestate: "test=1" },
      body,
    });
    expect(res.status).toBe(202);

    const steps = await eventually("the change's chain is handled", async () => chain(dgdChange.id));
    expect(steps.map((i) => i.function)).toEqual(["eligibility", "apply", "status"]);
    expect(steps.map((i) => i.decision).slice(0, 2)).toEqual(["Reconcile", "ApplyFailed"]);
    expect(steps[1]!.reply?.type).toBe(EventType.Rejected);
    expect(steps.map((i) => i["trace_id"])).toEqual([trace, trace, trace]);
    expect(new Set(steps.map((i) => i["span_id"])).size).toBe(3);
    // Which span each names as its parent depends on whether Knative passes the HTTP header on (the
    // producer's, a Broker span of its own, or none, leaving the previous function's extension): the
    // trace-id is the same either way.
    for (const step of steps) {
      expect(step["traceparent"]).toMatch(new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
      expect(step.status).toBeLessThan(300);
    }
  });
});
