// The product as it runs on the shared control plane: its functions are pods of the Knative
// Services in knative/, scaled by Knative Serving, fed by the real Broker. Tests send events to the
// Broker's ingress and read what each function did from its log (one JSON line per invocation, as
// on a cluster), as the log agent keeps it after the pod is gone.
import { readFileSync } from "node:fs";
import { inject } from "vitest";
import { BROKER } from "../../dev/node/product-cluster.ts";
import { sourceWatchesAlone, type Invocation } from "../../dev/node/product-observed.ts";
import { PRODUCT_NAMESPACE } from "../../dev/product.ts";
import { startTap, tapTrigger, type Delivery } from "../../dev/tap.ts";
import { toBinary, toStructured, type CloudEvent } from "../../shared/cloudevent.ts";
import { TEST_MANAGER, adminClient, eventually } from "./helpers.ts";

export { BROKER };

export type { Invocation };

/** The Broker's address as its clients outside the cluster reach it: its ingress Service's ClusterIP, by path. */
export function brokerIngress(): string {
  return inject("brokerIngress");
}

/**
 * Sends an event into the Broker as the product's source does: the ingress accepts it with 202,
 * and after a 5xx (a dispatch that failed inside the Broker) it is sent again, twice at most. Each is one
 * more duplicate, which the tests' handlers must take anyway.
 */
export async function send(event: CloudEvent, mode: "binary" | "structured" = "binary"): Promise<void> {
  const { headers, body } =
    mode === "binary"
      ? toBinary(event)
      : { headers: { "content-type": "application/cloudevents+json" }, body: JSON.stringify(toStructured(event)) };
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(brokerIngress(), { method: "POST", headers, body });
    if (res.status === 202) return;
    const answer = `the broker ingress answered ${res.status}: ${await res.text()}`;
    if (res.status < 500 || attempt >= 3) throw new Error(answer);
    console.log(`${answer}; sending ${event.id} again`);
    await new Promise((r) => setTimeout(r, 1000 * attempt));
  }
}

/**
 * Every invocation the function has logged so far, over all its pods, in the order the log agent
 * found them (a few hundred milliseconds after the function wrote them: wait for a line with
 * `eventually`). New lines only ever come at the end.
 */
export function invocations(fn: "eligibility" | "apply" | "status" | "dead-letter"): Invocation[] {
  return readFileSync(inject("functionsLog"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Invocation)
    .filter((i) => i.function === fn);
}

/**
 * Waits until apply has logged a run in `ns` that wrote (decision Applied) for a request of one of
 * `causes`. Apply logs its line after the status write a test waits for (it shows the status
 * itself, then writes its Event), so the line can come a moment after the status.
 */
export async function appliedFor(ns: string, causes: readonly string[]): Promise<void> {
  await eventually(
    `apply logs a run in ${ns} that wrote for a request of cause ${causes.join(" or ")}`,
    async () =>
      invocations("apply").some(
        (i) =>
          i.key?.namespace === ns &&
          i.decision === "Applied" &&
          causes.includes((i.key as { cause?: string }).cause ?? ""),
      ),
    10_000,
  );
}

/** A report apply showed itself, which status's Trigger leaves out (knative/triggers.yaml): it goes to no function. */
export const shownByApply = (reply: NonNullable<Invocation["reply"]>): boolean => reply.statuswritten === "true";

export function allInvocations(): Invocation[] {
  return (["eligibility", "apply", "status", "dead-letter"] as const).flatMap((fn) => invocations(fn));
}

const FINAL = (i: Invocation) => i.status < 300 || (i.status >= 400 && i.status < 500);

/**
 * The invocations an event set off, following each reply into the function it was routed to,
 * once every step has a final answer (2xx or 4xx). A retried delivery counts once, as its last answer.
 * A 4xx is final but is no success: unless a test expects one (`permanent: "allow"`), it throws,
 * so a test waiting for a chain fails at once, naming the step, instead of passing on.
 * The dead-letter function is no step of it (a Trigger deleted while an event is on its way, as the
 * replay test does, sends that event there).
 */
export function chain(eventId: string, permanent: "fail" | "allow" = "fail"): Invocation[] | undefined {
  const all = (["eligibility", "apply", "status"] as const).flatMap((fn) => invocations(fn));
  const out: Invocation[] = [];
  const pending = [eventId];
  while (pending.length > 0) {
    const id = pending.shift()!;
    const handled = all.filter((i) => i.event.id === id && FINAL(i));
    if (handled.length === 0) return undefined;
    // A redelivered event (at-least-once) counts once per function, as its last answer; of
    // duplicates answered at once, one ran and replied, the others shared its run (coalesced).
    for (const i of [...Map.groupBy(handled, (x) => x.function).values()].map(
      (answers) => answers.findLast((a) => a.reply) ?? answers.at(-1)!,
    )) {
      if (i.status >= 400 && permanent === "fail")
        throw new Error(
          `${i.function} answered ${i.status} (permanent) to ${i.event.type} ${id}: ${i.error ?? i.decision}`,
        );
      out.push(i);
      if (i.reply && !shownByApply(i.reply) && !pending.includes(i.reply.id)) pending.push(i.reply.id);
    }
  }
  return out;
}

export interface TestTap {
  events: CloudEvent[];
  /** The same, as delivered: headers and body. */
  deliveries: Delivery[];
  /** The tap's stream, for `poolrelay record --from`. */
  url: string;
  stop(): Promise<void>;
}

/** Every event entering the Broker from now on, through a Trigger of its own (dev/tap.ts). */
export async function tapBroker(name: string): Promise<TestTap> {
  const admin = await adminClient();
  const events: CloudEvent[] = [];
  const deliveries: Delivery[] = [];
  const tap = await startTap((e, d) => (events.push(e), deliveries.push(d)), inject("hostAddress"));
  const trigger = tapTrigger(name, PRODUCT_NAMESPACE, BROKER, tap.sink);
  await admin.apply(trigger, TEST_MANAGER, { force: true });
  await eventually(`Trigger ${name} is Ready`, async () => {
    const t = await admin.get<{ status?: { conditions?: { type: string; status: string }[] } }>({
      apiVersion: "eventing.knative.dev/v1",
      kind: "Trigger",
      namespace: PRODUCT_NAMESPACE,
      name,
    });
    return t?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  });
  return {
    events,
    deliveries,
    url: tap.url,
    stop: async () => {
      await admin.request("DELETE", `/apis/eventing.knative.dev/v1/namespaces/${PRODUCT_NAMESPACE}/triggers/${name}`);
      await tap.close();
    },
  };
}

/**
 * The ApiServerSource's adapter has rolled over for a new namespace and runs alone. The controller
 * writes the namespaces into the adapter's Deployment, so a new namespace replaces the adapter;
 * an adapter that stops cancels what it sent while that is still being delivered: the Broker's
 * retries of it and of the replies it caused, and their dead-lettering (the whole chain runs in the
 * adapter's request).
 */
export async function sourcesSettled(namespace: string): Promise<void> {
  const admin = await adminClient();
  await eventually(`the ApiServerSource adapter watches ${namespace} and runs alone`, () =>
    sourceWatchesAlone(admin, namespace),
  );
}

/**
 * No status invocation for the namespace's DynamoPoolRelays for 2 s: the pods' updates are handled,
 * so a status changed by hand now is not repaired by one of their runs first.
 */
export async function statusQuiet(namespace: string): Promise<void> {
  await eventually(`status is quiet for ${namespace}`, async () => {
    const handled = () => invocations("status").filter((i) => i.key?.namespace === namespace).length;
    const before = handled();
    await new Promise((r) => setTimeout(r, 2000));
    return handled() === before;
  });
}
