// The local broker answers subscribers as the Knative Broker's filter does.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { toBinary, toStructured, type CloudEvent } from "../../shared/cloudevent.ts";
import { LocalBroker, type DeliveryRecord } from "./broker.ts";

const event = (type: string, id = "1"): CloudEvent => ({ specversion: "1.0", id, type, source: "/s", extensions: {}, data: { n: 1 } });
const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => servers.splice(0).forEach((s) => (s.close(), s.closeAllConnections())));

async function subscriber(answer: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<{ url: string; calls: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(req, res, ++n));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, calls: () => n };
}

function broker(url: string, delivery = { retry: 2, backoffPolicy: "linear" as const, backoffDelay: "PT0.01S", timeout: "PT2S" }) {
  const records: DeliveryRecord[] = [];
  const seen: string[] = [];
  const b = new LocalBroker([{ trigger: "t", filter: { filter: { attributes: { type: "in" } } }, url, delivery }], {
    onDelivery: (r) => records.push(r),
    onEvent: (e) => seen.push(e.type),
  });
  return { b, records, seen };
}

describe("LocalBroker delivery", () => {
  it("takes a binary reply with 200 as a new event", async () => {
    const s = await subscriber((_q, res) => {
      const { headers, body } = toBinary(event("reply"));
      res.writeHead(200, headers).end(body);
    });
    const { b, records, seen } = broker(s.url);
    await b.publish(event("in"));
    expect(records[0]).toMatchObject({ status: 200, attempts: 1, reply: { type: "reply" } });
    expect(seen).toEqual(["in", "reply"]);
  });

  it("takes a structured reply with 202 as a new event too", async () => {
    const s = await subscriber((_q, res) => res.writeHead(202, { "content-type": "application/cloudevents+json" }).end(JSON.stringify(toStructured(event("reply")))));
    const { b, seen } = broker(s.url);
    await b.publish(event("in"));
    expect(seen).toEqual(["in", "reply"]);
  });

  it("treats a 2xx body that is not a CloudEvent as a bad gateway: retried, then dead-lettered with 502", async () => {
    const s = await subscriber((_q, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    const { b, records } = broker(s.url);
    await b.publish(event("in"));
    expect(s.calls()).toBe(3);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 502, attempts: 3, error: expect.stringMatching(/not a CloudEvent/) });
  });

  it("retries 5xx and stops at a 4xx that is not retriable", async () => {
    const s = await subscriber((_q, res, n) => res.writeHead(n === 1 ? 503 : 422).end("no"));
    const { b, records } = broker(s.url);
    await b.publish(event("in"));
    expect(s.calls()).toBe(2);
    expect(records[0]).toMatchObject({ status: 422, attempts: 2 });
  });

  it("acknowledges 204 without a reply", async () => {
    const s = await subscriber((_q, res) => res.writeHead(204).end());
    const { b, records, seen } = broker(s.url);
    await b.publish(event("in"));
    expect(records[0]).toMatchObject({ status: 204, attempts: 1 });
    expect(seen).toEqual(["in"]);
  });

  it("abandons deliveries in backoff when closed, without waiting out the retries", async () => {
    const s = await subscriber((_q, res) => res.writeHead(503).end());
    const { b } = broker(s.url, { retry: 5, backoffPolicy: "linear", backoffDelay: "PT10S", timeout: "PT2S" });
    await b.listen();
    b.accept(event("in"));
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await b.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
