// The functions behind the real Functions Framework over real HTTP, with the Kubernetes API
// mocked (nock) to produce the answers a cluster rarely gives on demand: bad input, transient
// failures, and a DynamoPoolRelay the core rejects.
import { http } from "@google-cloud/functions-framework";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import nock from "nock";
import type { Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apply } from "../../functions/apply/handler.ts";
import { eligibility } from "../../functions/eligibility/handler.ts";
import type { Handler } from "../../functions/runtime/handler.ts";
import { serve } from "../../functions/runtime/serve.ts";
import { status } from "../../functions/status/handler.ts";
import { toBinary, toStructured, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { KubeClient } from "../../shared/kube/client.ts";

const API = "https://kube.test";
const logs: Record<string, unknown>[] = [];
const servers: Record<string, { server: Server; url: string }> = {};

async function start(name: string, handler: Handler, env: Record<string, string> = {}) {
  const kube = new KubeClient({ server: API, httpsOptions: async () => ({}) });
  const target = `${name}-unit`;
  http(target, serve(name, handler, {
    kube: async () => kube,
    config: parseConfig(env),
    now: () => "2026-03-01T00:00:00Z",
    fetch: globalThis.fetch,
    log: (l) => logs.push(JSON.parse(l)),
  }));
  const server = getTestServer(target);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address() as { port: number };
  servers[name] = { server, url: `http://127.0.0.1:${address.port}/` };
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  await start("eligibility", eligibility);
  await start("apply", apply);
  await start("status", status);
  await start("hasty", eligibility, { INVOCATION_DEADLINE_SECONDS: "0.2" });
});
afterEach(() => {
  expect(nock.pendingMocks()).toEqual([]);
  nock.cleanAll();
});
afterAll(async () => {
  nock.enableNetConnect();
  await Promise.all(Object.values(servers).map(({ server }) => new Promise((r) => server.close(r))));
});

const reconcile = (namespace = "team-a", name = "g1") =>
  productEvent(EventType.Reconcile, { namespace, name, cause: "DGDChanged" }, { source: "/test", cause: "c1", time: "2026-03-01T00:00:00Z" });

async function post(fn: string, init: { headers: Record<string, string>; body: string }) {
  const res = await fetch(servers[fn]!.url, { method: "POST", headers: init.headers, body: init.body });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}
const binary = (fn: string, event: CloudEvent) => post(fn, toBinary(event));
const structured = (fn: string, event: CloudEvent) =>
  post(fn, { headers: { "content-type": "application/cloudevents+json" }, body: JSON.stringify(toStructured(event)) });

const dprPath = "/apis/nvidia.com/v1alpha1/namespaces/team-a/dynamopoolrelays/g1";
const dgdPath = "/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/g1";

describe("bad input is answered 4xx and changes nothing", () => {
  it.each<{ name: string; fn: string; req: { headers: Record<string, string>; body: string }; status: number; error?: RegExp }>([
    { name: "a request that is no CloudEvent", fn: "apply", req: { headers: { "content-type": "application/json" }, body: "{}" }, status: 400, error: /not a CloudEvent/ },
    // Answered by the Functions Framework's JSON body parser before the handler runs.
    { name: "invalid JSON", fn: "apply", req: { headers: { ...toBinary(reconcile()).headers }, body: "{nope" }, status: 400 },
    { name: "a missing source", fn: "apply", req: { headers: { "ce-specversion": "1.0", "ce-id": "1", "ce-type": EventType.Reconcile, "content-type": "application/json" }, body: "{}" }, status: 400, error: /source is required/ },
    { name: "a bad time", fn: "apply", req: { headers: { ...toBinary(reconcile()).headers, "ce-time": "lunchtime" }, body: toBinary(reconcile()).body }, status: 400, error: /time must be an RFC 3339 timestamp/ },
    { name: "a batch", fn: "status", req: { headers: { "content-type": "application/cloudevents-batch+json" }, body: "[]" }, status: 400, error: /batched CloudEvents are not accepted/ },
    { name: "a type the function does not handle", fn: "apply", req: toBinary({ ...reconcile(), type: "com.example.other" }), status: 400, error: /apply handles com\.nvidia\.dynamo\.poolrelay\.reconcile\.v1, got type com\.example\.other/ },
    { name: "invalid data", fn: "apply", req: toBinary({ ...reconcile(), data: { namespace: "", name: "g1", cause: "Whim" } }), status: 422, error: /the data of com\.nvidia\.dynamo\.poolrelay\.reconcile\.v1 event .* is invalid: namespace: .*; cause: / },
    { name: "a DGD event for another kind", fn: "eligibility", req: toBinary({ ...reconcile(), type: "dev.knative.apiserver.resource.add", data: { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "n" } } }), status: 422, error: /eligibility handles DynamoGraphDeployment and DynamoPoolRelay events, got kind Pod/ },
    { name: "a child event for an unmanaged object", fn: "status", req: toBinary({ ...reconcile(), type: "dev.knative.apiserver.resource.update", data: { apiVersion: "v1", kind: "Service", metadata: { name: "s", namespace: "n" } } }), status: 422, error: /Service n\/s is not managed by dynamo-pool-relay/ },
  ])("$name → $status", async ({ fn, req, status, error }) => {
    const before = logs.length;
    const res = await post(fn, req);
    expect(res.status).toBe(status);
    if (!error) return expect(logs.length).toBe(before);
    expect(JSON.parse(res.text).error).toMatch(error);
    expect(logs.at(-1)).toMatchObject({ function: fn, status, reads: 0, writes: 0 });
  });
});

describe("transient API failures are answered 5xx so the broker retries", () => {
  it.each([503, 500, 429])("answers 503 when the API server answers %i", async (code) => {
    nock(API).get(dprPath).reply(code, { kind: "Status", reason: "ServiceUnavailable", message: "etcd is busy" });
    nock(API).get(dgdPath).reply(200, {});
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).error).toMatch(/etcd is busy/);
  });

  it("re-reads and retries a status write conflict, then answers 503 if it persists", async () => {
    const dpr = { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 1, resourceVersion: "5" }, spec: { image: "r", clusterID: "c", replicas: 2 } };
    nock(API).get(dprPath).times(3).reply(200, dpr);
    nock(API).get(dgdPath).times(3).reply(404, { kind: "Status", reason: "NotFound" });
    for (const p of ["/api/v1/namespaces/team-a/serviceaccounts/g1-pool-relay", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/g1-pool-relay",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/g1-pool-relay", "/api/v1/namespaces/team-a/configmaps/g1-pool-relay",
      "/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay", "/api/v1/namespaces/team-a/services/g1-pool-relay"]) {
      nock(API).get(p).times(3).reply(404, { kind: "Status", reason: "NotFound" });
    }
    nock(API).get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices").query(true).times(3).reply(200, { items: [] });
    nock(API).put(`${dprPath}/status`).times(3).reply(409, { kind: "Status", reason: "Conflict", message: "the object has been modified" });
    const event = productEvent(EventType.Withdrawn, { namespace: "team-a", name: "g1", uid: "u1", generation: 1, reason: "DGDNotFound", message: "m", service: "absent" }, { source: "/t", cause: "c", time: "2026-03-01T00:00:00Z" });
    const res = await structured("status", event);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).error).toMatch(/409 the object has been modified/);
    expect(logs.at(-1)).toMatchObject({ reads: 27, writes: 3 });
  });
});

describe("hostile keys", () => {
  it.each([
    { namespace: "..", name: "." },
    { namespace: "../../etc", name: "g1" },
    { namespace: "team-a", name: "../../../api/v1/secrets" },
  ])("answers $namespace / $name with 422 and no API request, in every function", async ({ namespace, name }) => {
    const dgd = { specversion: "1.0", id: "h1", type: "dev.knative.apiserver.resource.update", source: "s", extensions: {}, datacontenttype: "application/json", data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { namespace, name } } } satisfies CloudEvent;
    const applied = productEvent(EventType.Applied, { namespace, name, uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] }, { source: "/t", cause: "c", time: "2026-03-01T00:00:00Z" });
    for (const [fn, event] of [["eligibility", dgd], ["apply", reconcile(namespace, name)], ["status", applied]] as const) {
      const res = await binary(fn, event);
      expect(res.status).toBe(422);
      expect(JSON.parse(res.text).error).toMatch(/must be (a namespace name|an object name|a DynamoPoolRelay name)/);
      expect(logs.at(-1)).toMatchObject({ function: fn, status: 422, reads: 0, writes: 0 });
    }
  });
});

describe("throttling and deadlines", () => {
  it("answers 503 with the API server's Retry-After when waiting would outlast the deadline", async () => {
    nock(API).get(dprPath).reply(429, { kind: "Status", reason: "TooManyRequests", message: "too many requests" }, { "Retry-After": "30" });
    const res = await binary("eligibility", { specversion: "1.0", id: "t1", type: "dev.knative.apiserver.resource.update", source: "s", extensions: {}, datacontenttype: "application/json", data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { namespace: "team-a", name: "g1" } } });
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("30");
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", status: 503, reads: 1 });
  });

  it("ends an invocation at its deadline: the request in flight is cut and the answer is 503", async () => {
    nock(API).get(dprPath).delay(5_000).reply(200, {});
    const res = await binary("hasty", { specversion: "1.0", id: "t2", type: "dev.knative.apiserver.resource.update", source: "s", extensions: {}, datacontenttype: "application/json", data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { namespace: "team-a", name: "g1" } } });
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).error).toMatch(/deadline has passed/);
    expect(logs.at(-1)).toMatchObject({ function: "hasty", status: 503, reads: 1, writes: 0, deadlineExceeded: true });
  });
});

describe("a DynamoPoolRelay the core rejects", () => {
  it("gets a rejected reply, and apply writes nothing", async () => {
    const bad = { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 3 }, spec: { image: "relay:1", clusterID: " padded " } };
    nock(API).get(dprPath).reply(200, bad);
    nock(API).get(dgdPath).reply(404, { kind: "Status", reason: "NotFound" });
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(res.headers["ce-type"]).toBe(EventType.Rejected);
    expect(JSON.parse(res.text)).toMatchObject({ namespace: "team-a", name: "g1", generation: 3, message: expect.stringMatching(/spec\.clusterID/) });
    expect(logs.at(-1)).toMatchObject({ decision: "Rejected", writes: 0 });
  });
});

describe("a spec the API server refuses", () => {
  it("is checked by a dry-run of the Deployment first, writes nothing, and is reported as ApplyFailed", async () => {
    const dpr = { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 2 }, spec: { image: "relay:1", clusterID: "c", tolerations: [{ operator: "Bogus" }] } };
    const dgd = { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: "team-a" }, spec: { components: [{ name: "w", type: "worker" }] } };
    nock(API).get(dprPath).reply(200, dpr);
    nock(API).get(dgdPath).reply(200, dgd);
    for (const p of ["/api/v1/namespaces/team-a/serviceaccounts/g1-pool-relay", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/g1-pool-relay",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/g1-pool-relay", "/api/v1/namespaces/team-a/configmaps/g1-pool-relay",
      "/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay", "/api/v1/namespaces/team-a/services/g1-pool-relay"]) {
      nock(API).get(p).reply(404, { kind: "Status", reason: "NotFound" });
    }
    nock(API).patch("/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay").query({ fieldManager: "dynamo-pool-relay/apply", dryRun: "All" })
      .reply(422, { kind: "Status", reason: "Invalid", message: 'spec.template.spec.tolerations[0].operator: Unsupported value: "Bogus"' });
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(res.headers["ce-type"]).toBe(EventType.Rejected);
    expect(JSON.parse(res.text)).toMatchObject({ reason: "ApplyFailed", generation: 2, message: expect.stringMatching(/tolerations\[0\]\.operator: Unsupported value/) });
    expect(logs.at(-1)).toMatchObject({ decision: "ApplyFailed", reads: 8, writes: 1 });
  });
});

describe("replies", () => {
  it("replies in binary mode with 200 and a deterministic id, in both content modes", async () => {
    nock(API).get(dprPath).times(2).reply(200, { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a" } });
    const dgdEvent: CloudEvent = {
      specversion: "1.0", id: "w1", type: "dev.knative.apiserver.resource.update", source: "https://10.96.0.1:443",
      extensions: { kind: "DynamoGraphDeployment" }, datacontenttype: "application/json",
      data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: "team-a" } },
    };
    const a = await binary("eligibility", dgdEvent);
    const b = await structured("eligibility", dgdEvent);
    for (const res of [a, b]) {
      expect(res.status).toBe(200);
      expect(res.headers["ce-type"]).toBe(EventType.Reconcile);
      expect(res.headers["ce-specversion"]).toBe("1.0");
      expect(JSON.parse(res.text)).toEqual({ namespace: "team-a", name: "g1", cause: "DGDChanged" });
    }
    expect(a.headers["ce-id"]).toBe(b.headers["ce-id"]);
  });

  it.each([
    { name: "an unobserved generation: a reconcile request", status: { observedGeneration: 1 }, generation: 2, code: 200, decision: "Reconcile" },
    { name: "a new one without status: a reconcile request", status: undefined, generation: 1, code: 200, decision: "Reconcile" },
    { name: "its own status write (generation observed): nothing to do", status: { observedGeneration: 3 }, generation: 3, code: 204, decision: "Observed" },
  ])("answers a DynamoPoolRelay event for $name, from the object as it is now", async ({ status, generation, code, decision }) => {
    nock(API).get(dprPath).reply(200, { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a", generation }, ...(status ? { status } : {}) });
    // The payload claims an observed generation; only the object read decides.
    const res = await binary("eligibility", {
      specversion: "1.0", id: `d-${generation}-${code}`, type: "dev.knative.apiserver.resource.update", source: "https://10.96.0.1:443", extensions: { kind: "DynamoPoolRelay" }, datacontenttype: "application/json",
      data: { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoPoolRelay", metadata: { name: "g1", namespace: "team-a", generation: 9 }, status: { observedGeneration: 9 } },
    });
    expect(res.status).toBe(code);
    if (code === 200) expect(JSON.parse(res.text)).toEqual({ namespace: "team-a", name: "g1", cause: "DPRChanged" });
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", decision, reads: 1, writes: 0 });
  });

  it("answers 204 without a reply when the DGD has no DynamoPoolRelay", async () => {
    nock(API).get(dprPath).reply(404, { kind: "Status", reason: "NotFound" });
    const res = await binary("eligibility", {
      specversion: "1.0", id: "w2", type: "dev.knative.apiserver.resource.delete", source: "s", extensions: {}, datacontenttype: "application/json",
      data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { name: "g1", namespace: "team-a" } },
    });
    expect(res.status).toBe(204);
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", decision: "NoDynamoPoolRelay", reads: 1, writes: 0 });
  });
});
