// The README's "Answers": transient failures get 503 so the Broker retries. Through serve(), the
// HTTP shell, with the real Kubernetes adapter against a loopback API server for the API's own
// failures (a 409 conflict on an apply, a reset connection, a request that never completes, an
// invocation past its deadline) and a fake sink for the resync's emits (refused, unreachable,
// unset). No wall clock: the request timeout runs on fake timers, the deadline on a fake clock.
// The fake sink honours the abort signal as sinkPost does (a post whose signal aborts is cut, one
// begun with an aborted signal sends nothing), so a post the emitter makes past the deadline shows.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { KubeClient, REQUEST_TIMEOUT_MS, type Clock } from "../../shared/kube/client.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import { apply } from "../apply/handler.ts";
import { EMIT_CONCURRENCY, eligibility, PAGE } from "../eligibility/handler.ts";
import type { Handler } from "./handler.ts";
import { serve, type Environment } from "./serve.ts";
import { sinkPost, type SinkPost } from "./sink.ts";

const NOW = "2026-03-01T00:00:00Z";

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The error an answer's JSON body gives. */
const errorOf = (answer: Answer) => (JSON.parse(answer.body) as { error: string }).error;

/** Calls the shell as the Functions Framework does, and keeps the answer and the log line. */
async function invoke(
  name: string,
  handler: Handler,
  env: Omit<Environment, "log" | "now">,
  event: CloudEvent,
): Promise<{ answer: Answer; log: Record<string, unknown> }> {
  const answer: Answer = { status: 0, headers: {}, body: "" };
  const res = {
    status: (code: number) => ((answer.status = code), res),
    set: (h: Record<string, string>) => (Object.assign(answer.headers, h), res),
    send: (body?: string) => void (answer.body = body ?? ""),
    end: () => undefined,
  };
  const { headers, body } = toBinary(event);
  const lines: string[] = [];
  await serve(name, handler, { ...env, now: () => NOW, log: (l) => lines.push(l) })(
    { method: "POST", headers, rawBody: Buffer.from(body) },
    res,
  );
  expect(lines).toHaveLength(1);
  return { answer, log: JSON.parse(lines[0]!) as Record<string, unknown> };
}

const servers: http.Server[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => (s.closeAllConnections(), new Promise((r) => s.close(r)))));
});

/** A loopback API server; `seen` is every request as `METHOD path?query`. */
async function apiServer(handler: http.RequestListener): Promise<{ kube: KubeClient; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => (seen.push(`${req.method} ${req.url}`), handler(req, res)));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const kube = new KubeClient({
    server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    httpsOptions: async () => ({}),
  });
  return { kube, seen };
}

const json = (res: http.ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
const notFound = { kind: "Status", reason: "NotFound", message: "not found" };
const dprPath = "/apis/nvidia.com/v1alpha1/namespaces/team-a/dynamopoolrelays/g1";
const dgdPath = "/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/g1";
const dpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 1 },
  spec: { image: "relay:1", clusterID: "c" },
};
const dgd = {
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
};
const reconcile = productEvent(
  EventType.Reconcile,
  { namespace: "team-a", name: "g1", cause: "DGDChanged" },
  { source: "/test", cause: "c1", time: NOW },
);

describe("transient API failures are answered 503, through the shell", () => {
  it("a conflict (409) on an apply: 503, so the Broker redelivers and apply decides again", async () => {
    const api = await apiServer((req, res) => {
      const path = req.url!.split("?")[0];
      if (req.method === "GET" && path === dprPath) return json(res, 200, dpr);
      if (req.method === "GET" && path === dgdPath) return json(res, 200, dgd);
      if (req.method === "GET" && path!.endsWith("/endpointslices")) return json(res, 200, { items: [] });
      if (req.method === "GET") return json(res, 404, notFound);
      if (req.method === "PATCH" && req.url!.includes("dryRun=All")) return json(res, 200, {});
      return json(res, 409, {
        kind: "Status",
        reason: "Conflict",
        message: "Operation cannot be fulfilled: the object has been modified",
      });
    });
    const { answer, log } = await invoke(
      "apply",
      apply,
      { kube: async () => api.kube, config: parseConfig({}, "apply"), post: sinkPost({}) },
      reconcile,
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(/409 Operation cannot be fulfilled/);
    expect(log).toMatchObject({ function: "apply", status: 503 });
    // It got as far as the first wave of real applies, twice (created unread, then after reading
    // every child): each of its writes conflicted, so no later wave was sent.
    const firstWave = [
      "api/v1/namespaces/team-a/configmaps",
      "api/v1/namespaces/team-a/serviceaccounts",
      "apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles",
    ].map((p) => `PATCH /${p}/g1-pool-relay`);
    const applied = api.seen
      .filter((s) => s.startsWith("PATCH") && !s.includes("dryRun=All"))
      .map((s) => s.split("?")[0]);
    expect(applied.sort()).toEqual([...firstWave, ...firstWave].sort());
  });

  it("a network error (the connection reset): 503", async () => {
    const api = await apiServer((req) => req.socket.destroy());
    const { answer, log } = await invoke(
      "apply",
      apply,
      { kube: async () => api.kube, config: parseConfig({}, "apply"), post: sinkPost({}) },
      reconcile,
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(
      /^GET \/apis\/nvidia\.com\/v1(alpha|beta)1\/namespaces\/team-a\/.*: (socket hang up|.*closed|.*ECONNRESET)/,
    );
    expect(log).toMatchObject({ status: 503 });
  });

  it(`a request without a complete answer within ${REQUEST_TIMEOUT_MS / 1000} s (a timeout): 503`, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const api = await apiServer(() => {
      // Never answers.
    });
    const done = invoke(
      "apply",
      apply,
      {
        kube: async () => api.kube,
        config: parseConfig({ INVOCATION_DEADLINE_SECONDS: "30" }, "apply"),
        post: sinkPost({}),
      },
      reconcile,
    );
    while (api.seen.length < 2) await new Promise<void>((r) => setImmediate(r));
    vi.advanceTimersByTime(REQUEST_TIMEOUT_MS);
    const { answer, log } = await done;
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(new RegExp(`no complete answer within ${REQUEST_TIMEOUT_MS} ms`));
    expect(log).toMatchObject({ status: 503 });
    expect(log).not.toHaveProperty("deadlineExceeded");
  });

  it("an invocation past its deadline: nothing more is sent, 503", async () => {
    const api = await apiServer((_req, res) => json(res, 200, {}));
    // The clock reads 0 when the invocation starts and an hour later at the first request.
    let reads = 0;
    const clock: Clock = { now: () => (reads++ === 0 ? 0 : 3_600_000), sleep: async () => {} };
    const { answer, log } = await invoke(
      "apply",
      apply,
      { kube: async () => api.kube, config: parseConfig({}, "apply"), post: sinkPost({}), clock },
      reconcile,
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(/not sent, the invocation's deadline has passed/);
    expect(log).toMatchObject({ status: 503, deadlineExceeded: true, writes: 0 });
    expect(api.seen).toEqual([]);
  });
});

/**
 * A sink as sinkPost is one: each post is answered by `answer` (by the code it resolves with, or
 * by its failure), unless the post's signal aborts first, which cuts it; a post begun with its
 * signal aborted already is refused at once, as node:http refuses it. `begun` records every post
 * by subject and whether its signal had aborted when it began; `taken`, the posts the sink answered.
 */
function fakeSink(answer: (subject: string) => Promise<number>) {
  const begun: { subject: string; aborted: boolean }[] = [];
  const taken: string[] = [];
  const post: SinkPost = (_url, headers, _body, signal) => {
    const subject = headers["ce-subject"]!;
    begun.push({ subject, aborted: signal.aborted });
    if (signal.aborted) return Promise.reject(new DOMException("This operation was aborted", "AbortError"));
    return new Promise<number>((resolve, reject) => {
      const cut = () => reject(new DOMException("This operation was aborted", "AbortError"));
      signal.addEventListener("abort", cut, { once: true });
      answer(subject).then(
        (code) => {
          signal.removeEventListener("abort", cut);
          if (signal.aborted) return;
          taken.push(subject);
          resolve(code);
        },
        (err: Error) => (signal.removeEventListener("abort", cut), reject(err)),
      );
    });
  };
  return { post, begun, taken };
}

describe("a resync tick whose requests the sink does not take is answered 503, so the Broker redelivers it", () => {
  const tick: CloudEvent = {
    specversion: "1.0",
    id: "p1",
    type: "dev.knative.sources.ping",
    source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
    time: NOW,
    datacontenttype: "application/json",
    extensions: {},
    data: {},
  };
  /** Two DynamoPoolRelays whose generations are not yet observed: both due. */
  const listed = () =>
    new FakeKube(
      ["g1", "g2"].map((name) => ({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        metadata: { name, namespace: "team-a", uid: `u-${name}`, generation: 1 },
      })),
    );
  const SINK = "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay";

  it.each([
    { name: "refuses them (400)", answer: 400 },
    { name: "refuses them (503)", answer: 503 },
    { name: "accepts none (404, no such Broker)", answer: 404 },
  ])("the sink $name: 503", async ({ answer: code }) => {
    const { post, taken } = fakeSink(async () => code);
    const { answer, log } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed().client, config: parseConfig({ K_SINK: SINK }, "eligibility"), post },
      tick,
    );
    expect(taken.sort()).toEqual(["team-a/g1", "team-a/g2"]);
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(
      new RegExp(`2 of 2 reconcile requests failed, 0 sent .*: the sink answered ${code} to event`),
    );
    expect(log).toMatchObject({ function: "eligibility", status: 503 });
  });

  it("the sink is unreachable: 503", async () => {
    const { post } = fakeSink(async () => {
      throw new Error("connect ECONNREFUSED 10.96.0.10:80");
    });
    const { answer } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed().client, config: parseConfig({ K_SINK: SINK }, "eligibility"), post },
      tick,
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(
      /2 of 2 reconcile requests failed.*the sink .* is unreachable: connect ECONNREFUSED/,
    );
  });

  it("K_SINK is not set (no SinkBinding): 503, naming the variable, and nothing is sent", async () => {
    const { post, begun } = fakeSink(async () => 202);
    const { answer } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed().client, config: parseConfig({}, "eligibility"), post },
      tick,
    );
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(/2 of 2 reconcile requests failed.*K_SINK is not set/);
    expect(begun).toEqual([]);
  });

  it("all taken: 204, no reply", async () => {
    const { post, taken } = fakeSink(async () => 202);
    const { answer, log } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed().client, config: parseConfig({ K_SINK: SINK }, "eligibility"), post },
      tick,
    );
    expect(answer.status).toBe(204);
    expect(log).toMatchObject({ decision: "Resync", emitted: 2, failed: 0 });
    expect(taken.sort()).toEqual(["team-a/g1", "team-a/g2"]);
  });
});

describe("a resync tick that outlasts its deadline emits nothing after it", () => {
  const tick: CloudEvent = {
    specversion: "1.0",
    id: "p2",
    type: "dev.knative.sources.ping",
    source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
    time: NOW,
    datacontenttype: "application/json",
    extensions: {},
    data: {},
  };
  const SINK = "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay";
  /** `n` DynamoPoolRelays whose generations are not yet observed: all due. */
  const listed = (n: number) =>
    new FakeKube(
      Array.from({ length: n }, (_, i) => ({
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        metadata: { name: `g${i}`, namespace: "team-a", uid: `u${i}`, generation: 1 },
      })),
    );
  /** A deadline of 100 ms (the least allowed), on the wall clock: the timer serve() arms is what aborts the posts. */
  const config = parseConfig({ K_SINK: SINK, INVOCATION_DEADLINE_SECONDS: "0.1" }, "eligibility");

  it("cuts the posts in flight at the deadline: a sink slower than the deadline takes none, and the answer is 503", async () => {
    // Answers after 1 s: past the deadline, within the test's time.
    const sink = fakeSink(() => new Promise((r) => setTimeout(() => r(202), 1_000)));
    const { answer, log } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed(2).client, config, post: sink.post },
      tick,
    );
    expect(sink.begun.map((b) => b.subject).sort()).toEqual(["team-a/g0", "team-a/g1"]);
    expect(sink.taken).toEqual([]);
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(/2 of 2 reconcile requests failed, 0 sent/);
    expect(log).toMatchObject({ status: 503, deadlineExceeded: true });
  });

  it("begins no post once the deadline has passed: the requests still queued fail unsent", async () => {
    // More due than EMIT_CONCURRENCY: the first EMIT_CONCURRENCY wait on the sink, which answers
    // none before the deadline; the rest come after it.
    const due = EMIT_CONCURRENCY + 3;
    const sink = fakeSink(() => new Promise(() => {}));
    const { answer, log } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed(due).client, config, post: sink.post },
      tick,
    );
    expect(sink.begun).toHaveLength(EMIT_CONCURRENCY);
    expect(sink.begun.filter((b) => b.aborted)).toEqual([]);
    expect(sink.taken).toEqual([]);
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(new RegExp(`${due} of ${due} reconcile requests failed, 0 sent`));
    expect(log).toMatchObject({ status: 503, deadlineExceeded: true });
  });

  it("reads no page of the listing after the deadline: the tick ends with the deadline's error", async () => {
    // The first page's requests wait on the sink past the deadline; the second page comes after it.
    const sink = fakeSink(() => new Promise(() => {}));
    const { answer, log } = await invoke(
      "eligibility",
      eligibility,
      { kube: async () => listed(PAGE + 1).client, config, post: sink.post },
      tick,
    );
    expect(sink.begun).toHaveLength(EMIT_CONCURRENCY);
    expect(answer.status).toBe(503);
    expect(errorOf(answer)).toMatch(/^listTablePages: not sent, the invocation's deadline has passed/);
    expect(log).toMatchObject({ status: 503, deadlineExceeded: true, reads: 1, writes: 0 });
  });
});
