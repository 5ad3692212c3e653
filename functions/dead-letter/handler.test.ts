// The dead-letter function, as the README and knative/services.yaml describe it: it logs what the
// Broker gave up on (the event whole, where it was going, the status and the answer Knative
// attached as knativeerror* extensions), asks for a reconcile of the pair it was about through
// K_SINK, and acknowledges it, so the Broker does not redeliver it; the logged event is one
// `poolrelay replay` reads.
import { describe, expect, it } from "vitest";
import { checked } from "../../cli/recording.ts";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import { serve } from "../runtime/serve.ts";
import { fromHttp } from "../../shared/cloudevent.ts";
import { deadLetter } from "./handler.ts";

const NOW = "2026-03-01T00:00:00Z";
const DEST = "http://poolrelay-apply.dynamo-system.svc.cluster.local";

/** A reconcile request as a Trigger dead-letters it: Knative adds where it failed, the status and the response body (base64). */
function deadLettered(code: string, response?: string): CloudEvent {
  const event = productEvent(
    EventType.Reconcile,
    { namespace: "team-a", name: "g1", cause: "Drift" },
    { source: "/dynamo-pool-relay/status", cause: "s1", time: NOW },
  );
  return {
    ...event,
    extensions: {
      knativeerrordest: DEST,
      knativeerrorcode: code,
      ...(response === undefined ? {} : { knativeerrordata: Buffer.from(response, "utf8").toString("base64") }),
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    },
  };
}

const SINK = "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay";

async function invoke(event: CloudEvent, sinkStatus = 202) {
  let status = 0;
  let body: string | undefined;
  const res = {
    status: (c: number) => ((status = c), res),
    set: () => res,
    send: (b?: string) => void (body = b),
    end: () => undefined,
  };
  const lines: string[] = [];
  const kube = new FakeKube();
  const sent: CloudEvent[] = [];
  const post = async (url: string, headers: Record<string, string>, raw: string) => {
    expect(url).toBe(SINK);
    const parsed = fromHttp(headers, Buffer.from(raw));
    if (!parsed.ok) throw new Error(parsed.error);
    sent.push(parsed.value);
    return sinkStatus;
  };
  const { headers, body: raw } = toBinary(event);
  await serve("dead-letter", deadLetter, {
    kube: async () => kube.client,
    config: parseConfig({ INVOCATION_DEADLINE_SECONDS: "8", K_SINK: SINK }, "dead-letter"),
    now: () => NOW,
    post,
    log: (l) => lines.push(l),
  })({ method: "POST", headers, rawBody: Buffer.from(raw) }, res);
  return { status, body, lines: lines.map((l) => JSON.parse(l) as Record<string, unknown>), kube, sent };
}

describe("dead-letter", () => {
  it("logs the event the Broker gave up on, with its destination, status and the answer it got, in one line", async () => {
    const event = deadLettered(
      "422",
      '{"error":"the data of com.nvidia.dynamo.poolrelay.reconcile.v1 event is invalid: name"}',
    );
    const { lines } = await invoke(event);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      function: "dead-letter",
      decision: "DeadLettered",
      destination: DEST,
      code: "422",
      response: '{"error":"the data of com.nvidia.dynamo.poolrelay.reconcile.v1 event is invalid: name"}',
      event: { id: event.id, type: EventType.Reconcile, source: "/dynamo-pool-relay/status", subject: "team-a/g1" },
    });
    // The event whole, as structured-mode JSON: its attributes, extensions and data.
    expect(lines[0]!["deadEvent"]).toEqual({
      specversion: "1.0",
      id: event.id,
      type: EventType.Reconcile,
      source: "/dynamo-pool-relay/status",
      subject: "team-a/g1",
      time: NOW,
      datacontenttype: "application/json",
      ...event.extensions,
      data: { namespace: "team-a", name: "g1", cause: "Drift" },
    });
  });

  it("acknowledges it (204, no reply), so it is not delivered again, and touches no API", async () => {
    const { status, body, lines, kube } = await invoke(deadLettered("503", "etcd is busy"));
    expect(status).toBe(204);
    expect(body).toBeUndefined();
    expect(lines[0]).toMatchObject({ status: 204, reads: 0, writes: 0 });
    expect(kube.calls).toEqual([]);
  });

  it("asks for a reconcile of the pair the event was about, marked as its own, with an id the same on a redelivery", async () => {
    const event = deadLettered("503", "etcd is busy");
    const { sent, lines } = await invoke(event);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      type: EventType.Reconcile,
      source: "/dynamo-pool-relay/dead-letter",
      subject: "team-a/g1",
      data: { namespace: "team-a", name: "g1", cause: "DeadLettered" },
    });
    expect(sent[0]!.extensions["deadletters"]).toBe("1");
    expect(lines[0]).toMatchObject({ asked: true, key: { namespace: "team-a", name: "g1" } });
    expect((await invoke(event)).sent[0]!.id).toBe(sent[0]!.id);
    expect((await invoke({ ...event, id: "another" })).sent[0]!.id).not.toBe(sent[0]!.id);
  });

  it("asks nothing again for its own request dead-lettered in turn: the requeue and the resync are left", async () => {
    const own = { ...deadLettered("503"), extensions: { ...deadLettered("503").extensions, deadletters: "1" } };
    const { sent, lines, status } = await invoke(own);
    expect(status).toBe(204);
    expect(sent).toEqual([]);
    expect(lines[0]).toMatchObject({
      decision: "DeadLettered",
      asked: false,
      why: expect.stringContaining("left to the requeue and the resync") as unknown,
    });
  });

  it("logs the dead letter all the same when the Broker does not take its request, saying why it asked nothing", async () => {
    const { status, lines } = await invoke(deadLettered("503"), 500);
    expect(status).toBe(204);
    expect(lines[0]).toMatchObject({
      decision: "DeadLettered",
      code: "503",
      destination: DEST,
      asked: false,
      why: expect.stringContaining("the sink answered 500") as unknown,
    });
  });

  it("logs an event dead-lettered without a response body (a timeout) without a response field", async () => {
    const { status, lines } = await invoke(deadLettered("408"));
    expect(status).toBe(204);
    expect(lines[0]).toMatchObject({ decision: "DeadLettered", code: "408", destination: DEST });
    expect(lines[0]).not.toHaveProperty("response");
  });

  it("logs an event `poolrelay replay` can read back and send as it was", async () => {
    const event = deadLettered("503", "etcd is busy");
    const { lines } = await invoke(event);
    const r = checked(lines[0]!["deadEvent"]);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.event).toEqual(event);
  });
});
