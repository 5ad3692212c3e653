// The fault suite's delivery-fault proxy (test/faults/delivery-proxy.ts) in front of a local receiver.
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DeliveryProxy } from "../faults/delivery-proxy.ts";

const FN = { apiVersion: "serving.knative.dev/v1", kind: "Service", namespace: "ns", name: "fn" };
const OTHER = { ...FN, name: "other" };

describe("DeliveryProxy", () => {
  let receiver: Server;
  let proxy: DeliveryProxy;
  let resolutions = 0;
  let unresolvable = false;
  const seen: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const bodies = () => seen.map((s) => s.body);

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on(
        "end",
        () => (
          seen.push({ path: req.url ?? "", headers: req.headers, body }),
          res.writeHead(202, { "x-answer": "yes" }).end("done")
        ),
      );
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const port = (receiver.address() as AddressInfo).port;
    proxy = new DeliveryProxy(async (ref) => {
      resolutions++;
      if (unresolvable) throw new Error("no address yet");
      return {
        url: new URL(`http://127.0.0.1:${port}/in/${ref.name}`),
        host: `${ref.name}.${ref.namespace}.svc.cluster.local`,
      };
    });
    await proxy.listen("127.0.0.1");
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((r) => receiver.close(r));
  });
  beforeEach(() => proxy.faults.set(undefined));

  const deliver = (uri: string, body: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string } | { error: string }>((resolve) => {
      const req = request(uri, { method: "POST", headers: { "ce-id": body } }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on("error", (err) => resolve({ error: err.message }));
      req.end(body);
    });
  const faulty = (rates: Record<string, number>) => proxy.faults.set({ seed: 1, targets: ["ns/fn"], rates });

  it("delivers to the destination its URI names, as a pod would send it, and passes the answer back", async () => {
    const uri = proxy.uri(FN);
    expect(uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ns\/fn$/);
    expect(await deliver(uri, "a")).toMatchObject({ status: 202, headers: { "x-answer": "yes" }, body: "done" });
    expect(seen.at(-1)).toMatchObject({
      path: "/in/fn",
      body: "a",
      headers: { host: "fn.ns.svc.cluster.local", "ce-id": "a" },
    });
  });

  it("refuses a URI it did not hand out", async () => {
    expect(await deliver(proxy.uri(FN).replace("/ns/fn", "/ns/nobody"), "b")).toMatchObject({ status: 404 });
    expect(bodies()).not.toContain("b");
  });

  it("answers 502 while the destination cannot be resolved, and resolves it again on the next delivery", async () => {
    const ref = { ...FN, name: "late" };
    unresolvable = true;
    const before = resolutions;
    expect(await deliver(proxy.uri(ref), "c")).toMatchObject({ status: 502 });
    unresolvable = false;
    expect(await deliver(proxy.uri(ref), "d")).toMatchObject({ status: 202 });
    expect(await deliver(proxy.uri(ref), "e")).toMatchObject({ status: 202 });
    expect(resolutions - before).toBe(2);
  });

  it("answers 503 without forwarding, only for the targets named", async () => {
    faulty({ unavailable: 1 });
    expect(await deliver(proxy.uri(FN), "f")).toMatchObject({ status: 503 });
    expect(bodies()).not.toContain("f");
    expect(await deliver(proxy.uri(OTHER), "g")).toMatchObject({ status: 202 });
    expect(bodies()).toContain("g");
  });

  it("forwards and loses the reply", async () => {
    faulty({ lostReply: 1 });
    expect(await deliver(proxy.uri(FN), "h")).toMatchObject({ error: expect.any(String) as unknown });
    expect(bodies()).toContain("h");
  });

  it("forwards, answers, and delivers the same request again later", async () => {
    faulty({ lateDuplicate: 1 });
    expect(await deliver(proxy.uri(FN), "i")).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(bodies().filter((b) => b === "i")).toHaveLength(2), { timeout: 5000 });
  });

  it("counts what it injected, and injects nothing once the faults are off", async () => {
    const counts = { ...proxy.faults.counts };
    expect(counts).toEqual({ unavailable: 1, lostReply: 1, lateDuplicate: 1 });
    expect(await deliver(proxy.uri(FN), "j")).toMatchObject({ status: 202 });
    expect(proxy.faults.counts).toEqual(counts);
  });
});
