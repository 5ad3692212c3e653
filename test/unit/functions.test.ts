// The functions behind the real Functions Framework over real HTTP, with the Kubernetes API
// mocked (nock) to produce the answers a cluster rarely gives on demand: bad input, transient
// failures, a DynamoPoolRelay the core rejects, Kubernetes Events and their failures, and trace
// context arriving in every form.
import { http } from "@google-cloud/functions-framework";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import nock from "nock";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dprTable } from "../builders.ts";
import { apply } from "../../functions/apply/handler.ts";
import { eligibility } from "../../functions/eligibility/handler.ts";
import type { Handler } from "../../functions/runtime/handler.ts";
import { serve } from "../../functions/runtime/serve.ts";
import { sinkPost } from "../../functions/runtime/sink.ts";
import { status } from "../../functions/status/handler.ts";
import { toBinary, toStructured, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig, type Program } from "../../shared/config.ts";
import { desiredChildren } from "../../shared/apply-plan.ts";
import { decide, type Decision } from "../../shared/decide.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { eventName, type KubeEvent } from "../../shared/k8s-events.ts";
import { KubeClient } from "../../shared/kube/client.ts";
import { planStatus } from "../../shared/status-plan.ts";
import { appliedHashes, liveChildren as asServed } from "../live-children.ts";

const API = "https://kube.test";
const logs: Record<string, unknown>[] = [];
const servers: Record<string, { server: Server; url: string }> = {};
/** What the Broker's ingress received from emitting functions (K_SINK). */
const sunk: { headers: IncomingHttpHeaders; body: string }[] = [];
const sink = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString("utf8")));
  req.on("end", () => (sunk.push({ headers: req.headers, body }), res.writeHead(202).end()));
});

async function start(
  name: string,
  handler: Handler,
  env: Record<string, string> = {},
  program: Program = name as Program,
) {
  const kube = new KubeClient({ server: API, httpsOptions: async () => ({}) });
  const target = `${name}-unit`;
  http(
    target,
    serve(name, handler, {
      kube: async () => kube,
      config: parseConfig(env, program),
      now: () => "2026-03-01T00:00:00Z",
      post: sinkPost({}),
      log: (l) => logs.push(JSON.parse(l) as Record<string, unknown>),
    }),
  );
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
  await start("hasty", eligibility, { INVOCATION_DEADLINE_SECONDS: "0.2" }, "eligibility");
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
  await start(
    "ticking",
    eligibility,
    { K_SINK: `http://127.0.0.1:${(sink.address() as { port: number }).port}/` },
    "eligibility",
  );
});
afterEach(() => {
  // Cleared before the check, so a test that leaves a mock fails alone, not every test after it.
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});
afterAll(async () => {
  nock.enableNetConnect();
  await Promise.all(
    [...Object.values(servers).map(({ server }) => server), sink].map((server) => new Promise((r) => server.close(r))),
  );
});

const reconcile = (namespace = "team-a", name = "g1") =>
  productEvent(
    EventType.Reconcile,
    { namespace, name, cause: "DGDChanged" },
    { source: "/test", cause: "c1", time: "2026-03-01T00:00:00Z" },
  );

async function post(fn: string, init: { headers: Record<string, string>; body: string }) {
  const res = await fetch(servers[fn]!.url, { method: "POST", headers: init.headers, body: init.body });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}
const binary = (fn: string, event: CloudEvent) => post(fn, toBinary(event));
const structured = (fn: string, event: CloudEvent) =>
  post(fn, { headers: { "content-type": "application/cloudevents+json" }, body: JSON.stringify(toStructured(event)) });

const dprPath = "/apis/nvidia.com/v1alpha1/namespaces/team-a/dynamopoolrelays/g1";
/** A DynamoPoolRelay change as the DynamoPoolRelay watch sends it, carrying the object with `metadata` and `status`. */
const dprEvent = (id: string, type: string, metadata: object, status: object): CloudEvent => ({
  specversion: "1.0",
  id,
  type: `dev.knative.apiserver.resource.${type}`,
  source: "https://10.96.0.1:443",
  extensions: { kind: "DynamoPoolRelay" },
  datacontenttype: "application/json",
  data: {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name: "g1", namespace: "team-a", ...metadata },
    status,
  },
});
const dgdPath = "/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/g1";
const eventsPath = "/api/v1/namespaces/team-a/events";
/** An Event of g1, by the name form every Event of the product has. */
const EVENT_NAME = /^\/api\/v1\/namespaces\/team-a\/events\/g1\.[0-9a-f]{16}$/;

const STATUS_BODIES: Record<number, object> = {
  201: {},
  409: { kind: "Status", reason: "AlreadyExists", message: "events already exists" },
  403: { kind: "Status", reason: "Forbidden", message: "events is forbidden: User cannot create resource events" },
  503: { kind: "Status", reason: "ServiceUnavailable", message: "etcd is busy" },
};

/** Answers `times` Event creates with `code` and keeps what was sent, in order. */
function recordCreates(times = 1, code = 201): KubeEvent[] {
  const created: KubeEvent[] = [];
  // nock also asks the matcher before the body has arrived (an empty string): only the body counts.
  nock(API)
    .post(eventsPath, (body: KubeEvent | string) => (typeof body === "object" && created.push(body), true))
    .times(times)
    .reply(code, STATUS_BODIES[code]);
  return created;
}

describe("bad input is answered 4xx and changes nothing", () => {
  it.each<{
    name: string;
    fn: string;
    req: { headers: Record<string, string>; body: string };
    status: number;
    error?: RegExp;
  }>([
    {
      name: "a request that is no CloudEvent",
      fn: "apply",
      req: { headers: { "content-type": "application/json" }, body: "{}" },
      status: 400,
      error: /not a CloudEvent/,
    },
    // Answered by the Functions Framework's JSON body parser before the handler runs.
    {
      name: "invalid JSON",
      fn: "apply",
      req: { headers: { ...toBinary(reconcile()).headers }, body: "{nope" },
      status: 400,
    },
    {
      name: "a missing source",
      fn: "apply",
      req: {
        headers: {
          "ce-specversion": "1.0",
          "ce-id": "1",
          "ce-type": EventType.Reconcile,
          "content-type": "application/json",
        },
        body: "{}",
      },
      status: 400,
      error: /source is required/,
    },
    {
      name: "a bad time",
      fn: "apply",
      req: { headers: { ...toBinary(reconcile()).headers, "ce-time": "lunchtime" }, body: toBinary(reconcile()).body },
      status: 400,
      error: /time must be an RFC 3339 timestamp/,
    },
    {
      name: "a batch",
      fn: "status",
      req: { headers: { "content-type": "application/cloudevents-batch+json" }, body: "[]" },
      status: 400,
      error: /batched CloudEvents are not accepted/,
    },
    {
      name: "a type the function does not handle",
      fn: "apply",
      req: toBinary({ ...reconcile(), type: "com.example.other" }),
      status: 400,
      error:
        /apply handles com\.nvidia\.dynamo\.poolrelay\.reconcile\.v1 and DynamoPoolRelay change events, got type com\.example\.other/,
    },
    {
      name: "invalid data",
      fn: "apply",
      req: toBinary({ ...reconcile(), data: { namespace: "", name: "g1", cause: "Whim" } }),
      status: 422,
      error: /the data of com\.nvidia\.dynamo\.poolrelay\.reconcile\.v1 event .* is invalid: namespace: .*; cause: /,
    },
    {
      name: "a DGD event for another kind",
      fn: "eligibility",
      req: toBinary({
        ...reconcile(),
        type: "dev.knative.apiserver.resource.add",
        data: { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "n" } },
      }),
      status: 422,
      error: /eligibility handles DynamoGraphDeployment change events, got kind Pod/,
    },
    {
      name: "a child event for an unmanaged object",
      fn: "status",
      req: toBinary({
        ...reconcile(),
        type: "dev.knative.apiserver.resource.update",
        data: { apiVersion: "v1", kind: "Service", metadata: { name: "s", namespace: "n" } },
      }),
      status: 422,
      error: /Service n\/s is not managed by dynamo-pool-relay/,
    },
  ])("$name → $status", async ({ fn, req, status, error }) => {
    const before = logs.length;
    const res = await post(fn, req);
    expect(res.status).toBe(status);
    if (!error) return expect(logs.length).toBe(before);
    expect((JSON.parse(res.text) as { error: string }).error).toMatch(error);
    expect(logs.at(-1)).toMatchObject({ function: fn, status, reads: 0, writes: 0 });
  });
});

describe("transient API failures are answered 5xx so the broker retries", () => {
  it.each([503, 500, 429])("answers 503 when the API server answers %i", async (code) => {
    nock(API).get(dprPath).reply(code, { kind: "Status", reason: "ServiceUnavailable", message: "etcd is busy" });
    nock(API).get(dgdPath).reply(200, {});
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(503);
    expect((JSON.parse(res.text) as { error: string }).error).toMatch(/etcd is busy/);
  });

  it("re-reads and retries a status write conflict, then answers 503 if it persists", async () => {
    const dpr = {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 1, resourceVersion: "5" },
      spec: { image: "r", clusterID: "c", replicas: 2 },
    };
    nock(API).get(dprPath).times(3).reply(200, dpr);
    nock(API).get(dgdPath).times(3).reply(404, { kind: "Status", reason: "NotFound" });
    for (const p of [
      "/api/v1/namespaces/team-a/serviceaccounts/g1-pool-relay",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/g1-pool-relay",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/g1-pool-relay",
      "/api/v1/namespaces/team-a/configmaps/g1-pool-relay",
      "/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay",
      "/api/v1/namespaces/team-a/services/g1-pool-relay",
    ]) {
      nock(API).get(p).times(3).reply(404, { kind: "Status", reason: "NotFound" });
    }
    nock(API)
      .get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices")
      .query(true)
      .times(3)
      .reply(200, { items: [] });
    nock(API)
      .put(`${dprPath}/status`)
      .times(3)
      .reply(409, { kind: "Status", reason: "Conflict", message: "the object has been modified" });
    const event = productEvent(
      EventType.Withdrawn,
      {
        namespace: "team-a",
        name: "g1",
        uid: "u1",
        generation: 1,
        reason: "DGDNotFound",
        message: "m",
        service: "absent",
      },
      { source: "/t", cause: "c", time: "2026-03-01T00:00:00Z" },
    );
    const res = await structured("status", event);
    expect(res.status).toBe(503);
    expect((JSON.parse(res.text) as { error: string }).error).toMatch(/409 the object has been modified/);
    expect(logs.at(-1)).toMatchObject({ reads: 27, writes: 3 });
  });
});

describe("hostile keys", () => {
  it.each([
    { namespace: "..", name: "." },
    { namespace: "../../etc", name: "g1" },
    { namespace: "team-a", name: "../../../api/v1/secrets" },
  ])("answers $namespace / $name with 422 and no API request, in every function", async ({ namespace, name }) => {
    const dgd = {
      specversion: "1.0",
      id: "h1",
      type: "dev.knative.apiserver.resource.update",
      source: "s",
      extensions: {},
      datacontenttype: "application/json",
      data: { apiVersion: "nvidia.com/v1beta1", kind: "DynamoGraphDeployment", metadata: { namespace, name } },
    } satisfies CloudEvent;
    const applied = productEvent(
      EventType.Applied,
      { namespace, name, uid: "u", generation: 1, applied: [], unchanged: [], skipped: [] },
      { source: "/t", cause: "c", time: "2026-03-01T00:00:00Z" },
    );
    for (const [fn, event] of [
      ["eligibility", dgd],
      ["apply", reconcile(namespace, name)],
      ["status", applied],
    ] as const) {
      const res = await binary(fn, event);
      expect(res.status).toBe(422);
      expect((JSON.parse(res.text) as { error: string }).error).toMatch(
        /must be (a namespace name|an object name|a DynamoPoolRelay name)/,
      );
      expect(logs.at(-1)).toMatchObject({ function: fn, status: 422, reads: 0, writes: 0 });
    }
  });
});

describe("throttling and deadlines", () => {
  it("answers 503 with the API server's Retry-After when waiting would outlast the deadline", async () => {
    nock(API)
      .get(dprPath)
      .reply(429, { kind: "Status", reason: "TooManyRequests", message: "too many requests" }, { "Retry-After": "30" });
    const res = await binary("eligibility", {
      specversion: "1.0",
      id: "t1",
      type: "dev.knative.apiserver.resource.update",
      source: "s",
      extensions: {},
      datacontenttype: "application/json",
      data: {
        apiVersion: "nvidia.com/v1beta1",
        kind: "DynamoGraphDeployment",
        metadata: { namespace: "team-a", name: "g1" },
      },
    });
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("30");
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", status: 503, reads: 1 });
  });

  it("ends an invocation at its deadline: the request in flight is cut and the answer is 503", async () => {
    nock(API).get(dprPath).delay(5_000).reply(200, {});
    const res = await binary("hasty", {
      specversion: "1.0",
      id: "t2",
      type: "dev.knative.apiserver.resource.update",
      source: "s",
      extensions: {},
      datacontenttype: "application/json",
      data: {
        apiVersion: "nvidia.com/v1beta1",
        kind: "DynamoGraphDeployment",
        metadata: { namespace: "team-a", name: "g1" },
      },
    });
    expect(res.status).toBe(503);
    expect((JSON.parse(res.text) as { error: string }).error).toMatch(/deadline has passed/);
    expect(logs.at(-1)).toMatchObject({ function: "hasty", status: 503, reads: 1, writes: 0, deadlineExceeded: true });
  });
});

describe("a DynamoPoolRelay the core rejects", () => {
  it("gets a rejected reply and writes no child, only an InvalidSpec Event, once per generation", async () => {
    const bad = {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 3 },
      spec: { image: "relay:1", clusterID: " padded " },
    };
    nock(API).get(dprPath).times(2).reply(200, bad);
    nock(API).get(dgdPath).times(2).reply(404, { kind: "Status", reason: "NotFound" });
    const created = recordCreates();
    nock(API).get(EVENT_NAME).reply(404, { kind: "Status", reason: "NotFound" });
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(res.headers["ce-type"]).toBe(EventType.Rejected);
    expect(JSON.parse(res.text)).toMatchObject({
      namespace: "team-a",
      name: "g1",
      generation: 3,
      message: expect.stringMatching(/spec\.clusterID/) as unknown,
    });
    expect(created).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "InvalidSpec",
        message: expect.stringMatching(/spec\.clusterID/) as unknown,
        source: { component: "dynamo-pool-relay/apply" },
        involvedObject: {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          name: "g1",
          namespace: "team-a",
          uid: "u1",
        },
      }),
    ]);
    expect(logs.at(-1)).toMatchObject({
      decision: "Rejected",
      reads: 3,
      writes: 1,
      kubeEvents: [{ reason: "InvalidSpec", name: created[0]!.metadata.name, outcome: "created" }],
    });

    // Decided again (a resync, another DGD event): the Event is there, so nothing is written.
    nock(API).get(`${eventsPath}/${created[0]!.metadata.name}`).reply(200, created[0]);
    expect((await binary("apply", { ...reconcile(), id: "again" })).status).toBe(200);
    expect(logs.at(-1)).toMatchObject({
      decision: "Rejected",
      reads: 3,
      writes: 0,
      kubeEvents: [{ reason: "InvalidSpec", outcome: "exists" }],
    });
  });
});

describe("a spec the API server refuses", () => {
  it("is checked by a dry-run of the Deployment first, writes nothing, and is reported as ApplyFailed", async () => {
    const dpr = {
      apiVersion: "nvidia.com/v1alpha1",
      kind: "DynamoPoolRelay",
      metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 2 },
      spec: { image: "relay:1", clusterID: "c", tolerations: [{ operator: "Bogus" }] },
    };
    const dgd = {
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { name: "g1", namespace: "team-a" },
      spec: { components: [{ name: "w", type: "worker" }] },
    };
    nock(API).get(dprPath).reply(200, dpr);
    nock(API).get(dgdPath).reply(200, dgd);
    // A status that never showed children: they are created unread, the Deployment's dry-run first.
    nock(API)
      .patch("/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay")
      .query({ fieldManager: "dynamo-pool-relay/apply", dryRun: "All" })
      .reply(422, {
        kind: "Status",
        reason: "Invalid",
        message: 'spec.template.spec.tolerations[0].operator: Unsupported value: "Bogus"',
      });
    nock(API).get(EVENT_NAME).reply(404, { kind: "Status", reason: "NotFound" });
    const created = recordCreates();
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(res.headers["ce-type"]).toBe(EventType.Rejected);
    expect(JSON.parse(res.text)).toMatchObject({
      reason: "ApplyFailed",
      generation: 2,
      message: expect.stringMatching(/tolerations\[0\]\.operator: Unsupported value/) as unknown,
    });
    expect(created).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "ApplyFailed",
        message: expect.stringMatching(/tolerations\[0\]\.operator: Unsupported value/) as unknown,
      }),
    ]);
    // The dry-run and the Event: no child.
    expect(logs.at(-1)).toMatchObject({
      decision: "ApplyFailed",
      reads: 3,
      writes: 2,
      kubeEvents: [{ reason: "ApplyFailed", outcome: "created" }],
    });
  });
});

describe("replies", () => {
  it("replies in binary mode with 200 and a deterministic id, in both content modes", async () => {
    nock(API)
      .get(dprPath)
      .times(2)
      .reply(200, {
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        metadata: { name: "g1", namespace: "team-a" },
      });
    const dgdEvent: CloudEvent = {
      specversion: "1.0",
      id: "w1",
      type: "dev.knative.apiserver.resource.update",
      source: "https://10.96.0.1:443",
      extensions: { kind: "DynamoGraphDeployment" },
      datacontenttype: "application/json",
      data: {
        apiVersion: "nvidia.com/v1beta1",
        kind: "DynamoGraphDeployment",
        metadata: { name: "g1", namespace: "team-a" },
      },
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
    { name: "an unobserved generation", metadata: { generation: 9 }, status: { observedGeneration: 8 } },
    { name: "a new one without status", metadata: { generation: 1 }, status: undefined },
  ])(
    "refuses a DynamoPoolRelay event carrying $name with 422, with no request: apply takes those",
    async ({ metadata, status }) => {
      // No API interceptor: a read would fail the invocation.
      const res = await binary("eligibility", dprEvent(`d-${metadata.generation}`, "update", metadata, status ?? {}));
      expect(res.status).toBe(422);
      expect((JSON.parse(res.text) as { error: string }).error).toMatch(
        /eligibility handles DynamoGraphDeployment change events, got kind DynamoPoolRelay/,
      );
      expect(logs.at(-1)).toMatchObject({ function: "eligibility", status: 422, reads: 0, writes: 0 });
    },
  );

  it.each([
    {
      name: "whose object is already observed (the product's own status write)",
      type: "update",
      metadata: { generation: 4 },
      status: { observedGeneration: 4 },
    },
    {
      name: "whose object is being deleted",
      type: "update",
      metadata: { generation: 5, deletionTimestamp: "2026-03-01T00:00:00Z" },
      status: { observedGeneration: 4 },
    },
    { name: "that was deleted", type: "delete", metadata: { generation: 5 }, status: { observedGeneration: 4 } },
  ])("apply answers a DynamoPoolRelay event $name with no request", async ({ type, metadata, status }) => {
    const res = await binary("apply", dprEvent(`o-${type}-${metadata.generation}`, type, metadata, status));
    expect(res.status).toBe(204);
    expect(logs.at(-1)).toMatchObject({ function: "apply", decision: "Observed", from: "event", reads: 0, writes: 0 });
  });

  it("answers 204 without a reply when the DGD has no DynamoPoolRelay", async () => {
    nock(API).get(dprPath).reply(404, { kind: "Status", reason: "NotFound" });
    const res = await binary("eligibility", {
      specversion: "1.0",
      id: "w2",
      type: "dev.knative.apiserver.resource.delete",
      source: "s",
      extensions: {},
      datacontenttype: "application/json",
      data: {
        apiVersion: "nvidia.com/v1beta1",
        kind: "DynamoGraphDeployment",
        metadata: { name: "g1", namespace: "team-a" },
      },
    });
    expect(res.status).toBe(204);
    expect(logs.at(-1)).toMatchObject({
      function: "eligibility",
      decision: "NoDynamoPoolRelay",
      key: { namespace: "team-a", name: "g1" },
      reads: 1,
      writes: 0,
    });
  });
});

const CHILD_PATHS = {
  ServiceAccount: "/api/v1/namespaces/team-a/serviceaccounts/g1-pool-relay",
  Role: "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/g1-pool-relay",
  RoleBinding: "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/g1-pool-relay",
  ConfigMap: "/api/v1/namespaces/team-a/configmaps/g1-pool-relay",
  Deployment: "/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay",
  Service: "/api/v1/namespaces/team-a/services/g1-pool-relay",
} as const;
const notFound = { kind: "Status", reason: "NotFound" };
const validDpr = {
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 2, resourceVersion: "5" },
  spec: { image: "relay:1", clusterID: "c" },
};
const eligibleDgd = {
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
};
const defaults = parseConfig({}).defaults;

/** The children as the API server returns them after an apply of this decision (defaults, managedFields and all). */
function liveChildren(): Record<string, object> {
  const decision = decide(validDpr, eligibleDgd, defaults) as Extract<Decision, { action: "apply" }>;
  return asServed({
    dprUid: "u1",
    clusterID: "c",
    connectionRevision: decision.connectionRevision,
    sourcesText: decision.sources.text,
    appliedHash: appliedHashes(desiredChildren(decision)),
  });
}

/** validDpr once a status showed its Relay running: apply reads the children before it writes. */
const shownDpr = { ...validDpr, status: { replicas: 2 } };

/**
 * What apply reads of the DynamoPoolRelay (by default one whose status showed its children), its DGD
 * and the six children (`live` answers for a child, else 404), and the status it then shows itself
 * (the one stored is not the children's, so it always writes one).
 */
function applyReads(live: Record<string, object> = {}, dpr: object = shownDpr) {
  nock(API).get(dprPath).reply(200, dpr);
  nock(API).get(dgdPath).reply(200, eligibleDgd);
  for (const [kind, path] of Object.entries(CHILD_PATHS)) {
    if (live[kind]) nock(API).get(path).reply(200, live[kind]);
    else nock(API).get(path).reply(404, notFound);
  }
  // In the children's round, whether the Service is there or not.
  nock(API).get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices").query(true).reply(200, { items: [] });
  nock(API).put(`${dprPath}/status`).reply(200, validDpr);
}

/** What apply reads to create validDpr's children unread (its status never showed them), and the status it shows. */
function unreadApply() {
  nock(API).get(dprPath).reply(200, validDpr);
  nock(API).get(dgdPath).reply(200, eligibleDgd);
  nock(API).put(`${dprPath}/status`).reply(200, validDpr);
}

/** Server-side applies of these children (and the Deployment's dry-run first, when it is one of them). */
function applyWrites(kinds: readonly (keyof typeof CHILD_PATHS)[]) {
  if (kinds.includes("Deployment"))
    nock(API)
      .patch(CHILD_PATHS.Deployment)
      .query((q) => q["dryRun"] === "All")
      .reply(200, {});
  // The API server answers with the object; the Service's UID names a Published Event.
  for (const kind of kinds)
    nock(API)
      .patch(CHILD_PATHS[kind])
      .query((q) => q["dryRun"] === undefined)
      .reply(200, { metadata: { uid: `${kind}-uid` } });
}

describe("a DGD event that changes nothing the decision reads", () => {
  /** validDpr as the status function leaves it once the children carry the decision for eligibleDgd. */
  function settledDpr() {
    const decision = decide(validDpr, eligibleDgd, defaults);
    const live = liveChildren() as Record<string, never>;
    const observed = {
      serviceAccount: live["ServiceAccount"],
      role: live["Role"],
      roleBinding: live["RoleBinding"],
      configMap: live["ConfigMap"],
      deployment: live["Deployment"],
      service: live["Service"],
      endpointSlices: [],
    };
    const plan = planStatus({ dpr: validDpr, decision, observed, changed: [], now: "2026-03-01T00:00:00Z" });
    expect(plan.reflects).toBe(true);
    return { ...validDpr, status: plan.status };
  }
  const update = (data: object) =>
    ({
      specversion: "1.0",
      id: "u1",
      type: "dev.knative.apiserver.resource.update",
      source: "s",
      extensions: {},
      datacontenttype: "application/json",
      data,
    }) as CloudEvent;

  it("costs one read and asks for no reconcile: the Dynamo operator rewrote the DGD's status", async () => {
    nock(API).get(dprPath).reply(200, settledDpr());
    const res = await binary(
      "eligibility",
      update({ ...eligibleDgd, status: { state: "successful", conditions: [{ type: "Ready", status: "True" }] } }),
    );
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect(logs.at(-1)).toMatchObject({
      function: "eligibility",
      decision: "Unchanged",
      key: { namespace: "team-a", name: "g1" },
      reads: 1,
      writes: 0,
    });
  });

  it("asks for a reconcile when the event's DGD decides otherwise (a new worker generation)", async () => {
    nock(API).get(dprPath).reply(200, settledDpr());
    const res = await binary(
      "eligibility",
      update({ ...eligibleDgd, status: { components: { w: { componentNames: ["g1-w-bbbb2222"] } } } }),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ namespace: "team-a", name: "g1", cause: "DGDChanged" });
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", decision: "Reconcile", reads: 1, writes: 0 });
  });
});

describe("Kubernetes Events from apply", () => {
  const ALL = ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"] as const;

  it("publishes from nothing with one Published Event; a concurrent duplicate creates the same name, gets 409, and counts it done", async () => {
    unreadApply();
    applyWrites(ALL);
    const created = recordCreates();
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(created).toEqual([
      expect.objectContaining({
        type: "Normal",
        reason: "Published",
        message:
          "Service g1-pool-relay published; applied ServiceAccount, Role, RoleBinding, ConfigMap, Deployment, Service for generation 2",
        involvedObject: {
          apiVersion: "nvidia.com/v1alpha1",
          kind: "DynamoPoolRelay",
          name: "g1",
          namespace: "team-a",
          uid: "u1",
        },
        source: { component: "dynamo-pool-relay/apply" },
        reportingComponent: "dynamo-pool-relay/apply",
        count: 1,
        firstTimestamp: "2026-03-01T00:00:00Z",
        lastTimestamp: "2026-03-01T00:00:00Z",
      }),
    ]);
    expect(created[0]!.metadata.name).toBe(eventName(validDpr, { identity: ["Published", "Service-uid"] }));
    expect(logs.at(-1)).toMatchObject({
      decision: "Applied",
      reads: 2,
      writes: 9,
      childReads: "none",
      statusShown: "written",
      kubeEvents: [{ reason: "Published", name: created[0]!.metadata.name, outcome: "created" }],
    });

    // The duplicate ran after the first had written all but the Service: its unread creation is
    // refused (the Deployment exists), it reads the children, writes less, gets the same Service
    // back, and so reports the same occurrence.
    const { Service: _, ...written } = liveChildren();
    nock(API)
      .patch(CHILD_PATHS.Deployment)
      .query((q) => q["dryRun"] === "All")
      .reply(409, { kind: "Status", reason: "Conflict", code: 409 });
    applyReads(written, validDpr);
    applyWrites(["Service"]);
    const duplicate = recordCreates(1, 409);
    const again = await binary("apply", { ...reconcile(), id: "c2" });
    expect(again.status).toBe(200);
    expect(again.headers["ce-type"]).toBe(EventType.Applied);
    expect(duplicate[0]!.metadata.name).toBe(created[0]!.metadata.name);
    expect(logs.at(-1)).toMatchObject({
      decision: "Applied",
      kubeEvents: [{ reason: "Published", outcome: "exists" }],
    });
    expect(logs.at(-1)).not.toHaveProperty("error");
  });

  it("writes no child, and no Event, when nothing changed: only the status it found not shown yet", async () => {
    applyReads(liveChildren());
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ applied: [], unchanged: [...ALL], statusWritten: true });
    expect(logs.at(-1)).toMatchObject({ decision: "Applied", reads: 9, writes: 1, statusShown: "written" });
    expect(logs.at(-1)).not.toHaveProperty("kubeEvents");
  });

  it("reports a child it rewrote as Applied, and a foreign Service it left alone as ForeignChild (looked up first: every resync repeats it)", async () => {
    const live = liveChildren();
    const foreign = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "g1-pool-relay", namespace: "team-a", uid: "s9" },
      spec: { ports: [{ port: 80 }] },
    };
    applyReads({ ...live, ConfigMap: { ...live["ConfigMap"], data: { "sources.json": "{}" } }, Service: foreign });
    applyWrites(["ConfigMap"]);
    nock(API).get(EVENT_NAME).reply(404, notFound);
    const created = recordCreates(2);
    const res = await binary("apply", reconcile());
    expect(res.status).toBe(200);
    expect(created.map((e) => [e.type, e.reason, e.message])).toEqual([
      ["Normal", "Applied", "applied ConfigMap for generation 2"],
      ["Warning", "ForeignChild", "Service g1-pool-relay exists and is not controlled by this DynamoPoolRelay"],
    ]);
    expect(logs.at(-1)).toMatchObject({
      decision: "Applied",
      reads: 10,
      writes: 4,
      kubeEvents: [
        { reason: "Applied", outcome: "created" },
        { reason: "ForeignChild", outcome: "created" },
      ],
    });
  });

  /**
   * What a withdrawal reads of validDpr (its DGD gone): the Service (`service`, which it deletes,
   * else 404) and the Deployment (none), but no EndpointSlices (nothing listens behind a Service
   * that is gone); and the status it then shows.
   */
  function withdrawalReads(service?: object) {
    nock(API).get(dprPath).reply(200, validDpr);
    nock(API).get(dgdPath).reply(404, notFound);
    if (service) nock(API).get(CHILD_PATHS.Service).reply(200, service);
    else nock(API).get(CHILD_PATHS.Service).reply(404, notFound);
    nock(API).get(CHILD_PATHS.Deployment).reply(404, notFound);
    nock(API).put(`${dprPath}/status`).reply(200, validDpr);
  }
  const ownService = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "g1-pool-relay",
      namespace: "team-a",
      uid: "s1",
      ownerReferences: [{ uid: "u1", controller: true }],
    },
  };

  it("reports the withdrawal of a Service it deleted, named by that Service's UID", async () => {
    withdrawalReads(ownService);
    nock(API)
      .delete(CHILD_PATHS.Service, (body: { preconditions?: { uid?: string } }) => body.preconditions?.uid === "s1")
      .reply(200, {});
    const created = recordCreates();
    const res = await binary("apply", reconcile());
    expect(res.headers["ce-type"]).toBe(EventType.Withdrawn);
    expect(created).toEqual([
      expect.objectContaining({
        type: "Normal",
        reason: "Withdrawn",
        message: expect.stringMatching(/^Service g1-pool-relay withdrawn: /) as unknown,
      }),
    ]);
    expect(created[0]!.metadata.name).toBe(eventName(validDpr, { identity: ["Withdrawn", "s1"] }));
    expect(logs.at(-1)).toMatchObject({
      decision: "Withdrawn",
      service: "deleted",
      reads: 4,
      writes: 3,
      statusShown: "written",
      kubeEvents: [{ reason: "Withdrawn", outcome: "created" }],
    });
    // Shown: the extension status's Trigger leaves the report out by, on the wire and in the log line.
    expect(res.headers["ce-statuswritten"]).toBe("true");
    expect(logs.at(-1)).toMatchObject({ reply: { type: EventType.Withdrawn, statuswritten: "true" } });
  });

  it("writes no Event when a withdrawal finds nothing to delete: only the status it has not shown", async () => {
    withdrawalReads();
    expect((await binary("apply", reconcile())).status).toBe(200);
    expect(logs.at(-1)).toMatchObject({
      decision: "Withdrawn",
      service: "absent",
      reads: 4,
      writes: 1,
      statusShown: "written",
    });
    expect(logs.at(-1)).not.toHaveProperty("kubeEvents");
  });

  it.each([403, 503])(
    "answers as if the Event were written when its create gets %i: logged once, not retried, not redelivered",
    async (code) => {
      withdrawalReads(ownService);
      nock(API).delete(CHILD_PATHS.Service).reply(200, {});
      const tried = recordCreates(1, code);
      const res = await binary("apply", reconcile());
      expect(res.status).toBe(200);
      expect(res.headers["ce-type"]).toBe(EventType.Withdrawn);
      expect(tried).toHaveLength(1);
      expect(logs.at(-1)).toMatchObject({
        status: 200,
        decision: "Withdrawn",
        writes: 3,
        kubeEvents: [
          {
            reason: "Withdrawn",
            outcome: "failed",
            error: expect.stringContaining(`POST ${eventsPath}: ${code}`) as unknown,
          },
        ],
      });
    },
  );
});

describe("Kubernetes Events from status", () => {
  const withdrawnReport = (id = "w1") => ({
    ...productEvent(
      EventType.Withdrawn,
      {
        namespace: "team-a",
        name: "g1",
        uid: "u1",
        generation: 2,
        reason: "DGDNotFound",
        message: "m",
        service: "absent",
      },
      { source: "/t", cause: "c", time: "2026-03-01T00:00:00Z" },
    ),
    id,
  });
  const readyTrue = {
    observedGeneration: 2,
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Ready",
        message: "the Relay listens",
        lastTransitionTime: "2026-02-01T00:00:00Z",
        observedGeneration: 2,
      },
    ],
  };

  /** status reads the DynamoPoolRelay (as given, in turn), its DGD (gone) and its children (none). */
  function statusReads(...dprs: object[]) {
    for (const d of dprs) nock(API).get(dprPath).reply(200, d);
    nock(API).get(dgdPath).times(dprs.length).reply(404, notFound);
    for (const path of Object.values(CHILD_PATHS)) nock(API).get(path).times(dprs.length).reply(404, notFound);
    nock(API)
      .get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices")
      .query(true)
      .times(dprs.length)
      .reply(200, { items: [] });
  }

  it("reports Ready turning False once, after its status write, named by the status version it replaced", async () => {
    statusReads({ ...validDpr, status: readyTrue });
    nock(API).put(`${dprPath}/status`).reply(200, {});
    const created = recordCreates();
    expect((await binary("status", withdrawnReport())).status).toBe(204);
    expect(created).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "NotReady",
        message: expect.stringMatching(/^Ready is False \(NotEligible\): /) as unknown,
        source: { component: "dynamo-pool-relay/status" },
      }),
    ]);
    expect(created[0]!.metadata.name).toBe(eventName(validDpr, { identity: ["Ready", "False", "5"] }));
    expect(logs.at(-1)).toMatchObject({
      decision: "StatusWritten",
      ready: "False",
      writes: 2,
      kubeEvents: [{ reason: "NotReady", outcome: "created" }],
    });
  });

  it("writes no Event when it loses the status write to a concurrent invocation, which made the transition", async () => {
    const theirs = {
      ...validDpr,
      metadata: { ...validDpr.metadata, resourceVersion: "6" },
      status: { conditions: [{ ...readyTrue.conditions[0]!, status: "False", reason: "NotEligible" }] },
    };
    statusReads({ ...validDpr, status: readyTrue }, theirs);
    nock(API)
      .put(`${dprPath}/status`)
      .reply(409, { kind: "Status", reason: "Conflict", message: "the object has been modified" });
    nock(API).put(`${dprPath}/status`).reply(200, {});
    expect((await binary("status", withdrawnReport())).status).toBe(204);
    expect(logs.at(-1)).toMatchObject({ decision: "StatusWritten", ready: "False", writes: 2 });
    expect(logs.at(-1)).not.toHaveProperty("kubeEvents");
  });

  it("writes nothing, and no Event, when the recomputed status is the stored one", async () => {
    const decision = decide(validDpr, undefined, defaults);
    const empty = {
      serviceAccount: undefined,
      role: undefined,
      roleBinding: undefined,
      configMap: undefined,
      deployment: undefined,
      service: undefined,
      endpointSlices: [],
    };
    const stored = planStatus({
      dpr: validDpr,
      decision,
      observed: empty,
      changed: [],
      now: "2026-03-01T00:00:00Z",
    }).status;
    statusReads({ ...validDpr, status: stored });
    expect((await binary("status", withdrawnReport())).status).toBe(204);
    expect(logs.at(-1)).toMatchObject({ decision: "Unchanged", reads: 9, writes: 0 });
    expect(logs.at(-1)).not.toHaveProperty("kubeEvents");
  });
});

describe("W3C trace context", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const PARENT = `00-${TRACE}-00f067aa0ba902b7-01`;
  const dgdChange = (id: string, extensions: Record<string, string> = {}): CloudEvent => ({
    specversion: "1.0",
    id,
    type: "dev.knative.apiserver.resource.update",
    source: "https://10.96.0.1:443",
    extensions,
    datacontenttype: "application/json",
    data: {
      apiVersion: "nvidia.com/v1beta1",
      kind: "DynamoGraphDeployment",
      metadata: { name: "g1", namespace: "team-a" },
    },
  });
  const withHeaders = (req: { headers: Record<string, string>; body: string }, headers: Record<string, string>) => ({
    ...req,
    headers: { ...req.headers, ...headers },
  });
  const dprExists = () =>
    nock(API)
      .get(dprPath)
      .reply(200, {
        apiVersion: "nvidia.com/v1alpha1",
        kind: "DynamoPoolRelay",
        metadata: { name: "g1", namespace: "team-a" },
      });
  /** The reply as the Broker would deliver it: its ce-* headers and content type, and its body. */
  const forward = (res: { headers: Record<string, string>; text: string }) => ({
    headers: Object.fromEntries(
      Object.entries(res.headers).filter(([k]) => k.startsWith("ce-") || k === "content-type"),
    ),
    body: res.text,
  });

  it.each([
    {
      name: "the HTTP headers Knative propagates",
      send: (e: CloudEvent) =>
        post("eligibility", withHeaders(toBinary(e), { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" })),
    },
    {
      name: "binary-mode extension attributes (ce-traceparent)",
      send: (e: CloudEvent) =>
        binary("eligibility", { ...e, extensions: { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" } }),
    },
    {
      name: "structured-mode attributes (traceparent)",
      send: (e: CloudEvent) =>
        structured("eligibility", { ...e, extensions: { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" } }),
    },
  ])("continues a trace received as $name in the reply and the log line", async ({ send }) => {
    dprExists();
    const res = await send(dgdChange("t-1"));
    expect(res.status).toBe(200);
    const [, traceId, spanId, flags] = res.headers["ce-traceparent"]!.split("-");
    expect({ traceId, flags }).toEqual({ traceId: TRACE, flags: "01" });
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe("00f067aa0ba902b7");
    expect(res.headers["ce-tracestate"]).toBe("congo=t61rcWkgMzE");
    expect(logs.at(-1)).toMatchObject({
      function: "eligibility",
      trace_id: TRACE,
      span_id: spanId,
      traceparent: PARENT,
    });
  });

  it("takes the HTTP header over the extension, and gives a redelivery the same reply", async () => {
    const other = `00-${"a".repeat(32)}-${"b".repeat(16)}-00`;
    const send = () =>
      post("eligibility", withHeaders(toBinary(dgdChange("t-2", { traceparent: other })), { traceparent: PARENT }));
    dprExists();
    dprExists();
    const [first, again] = [await send(), await send()];
    expect(first.headers["ce-traceparent"]).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(again.headers["ce-traceparent"]).toBe(first.headers["ce-traceparent"]);
    expect(again.text).toBe(first.text);
  });

  it.each([
    { name: "an all-zero trace-id", value: `00-${"0".repeat(32)}-00f067aa0ba902b7-01` },
    { name: "upper-case hex", value: PARENT.toUpperCase() },
    { name: "a version 00 value with a field appended", value: `${PARENT}-01` },
    { name: "no traceparent at all, only a tracestate", value: undefined },
  ])("ignores $name: the same answer as without, no trace in reply or log", async ({ value }) => {
    dprExists();
    const extensions: Record<string, string> = {
      tracestate: "congo=t61rcWkgMzE",
      ...(value === undefined ? {} : { traceparent: value }),
    };
    const res = await post(
      "eligibility",
      withHeaders(toBinary(dgdChange("t-3", extensions)), value === undefined ? {} : { traceparent: value }),
    );
    expect(res.status).toBe(200);
    expect(res.headers).not.toHaveProperty("ce-traceparent");
    expect(res.headers).not.toHaveProperty("ce-tracestate");
    expect(logs.at(-1)).toMatchObject({ function: "eligibility", status: 200 });
    expect(logs.at(-1)).not.toHaveProperty("trace_id");
  });

  it("follows one DGD change through eligibility, apply and status: one trace-id, a span each", async () => {
    dprExists();
    const fromEligibility = await post("eligibility", withHeaders(toBinary(dgdChange("t-4")), { traceparent: PARENT }));
    expect(fromEligibility.headers["ce-type"]).toBe(EventType.Reconcile);

    const bad = { ...validDpr, spec: { image: "relay:1", clusterID: " padded " } };
    nock(API).get(dprPath).reply(200, bad);
    nock(API).get(dgdPath).reply(404, notFound);
    nock(API).get(EVENT_NAME).reply(404, notFound);
    recordCreates();
    const fromApply = await post("apply", forward(fromEligibility));
    expect(fromApply.headers["ce-type"]).toBe(EventType.Rejected);

    nock(API).get(dprPath).reply(200, bad);
    nock(API).get(dgdPath).reply(404, notFound);
    for (const path of Object.values(CHILD_PATHS)) nock(API).get(path).reply(404, notFound);
    nock(API).get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices").query(true).reply(200, { items: [] });
    nock(API).put(`${dprPath}/status`).reply(200, {});
    expect((await post("status", forward(fromApply))).status).toBe(204);

    const chain = logs.slice(-3);
    expect(chain.map((l) => [l["function"], l["trace_id"]])).toEqual([
      ["eligibility", TRACE],
      ["apply", TRACE],
      ["status", TRACE],
    ]);
    // Each continues the span of the one before it.
    expect(chain[1]!["traceparent"]).toBe(fromEligibility.headers["ce-traceparent"]);
    expect(chain[2]!["traceparent"]).toBe(fromApply.headers["ce-traceparent"]);
    expect(new Set(chain.map((l) => l["span_id"])).size).toBe(3);
  });

  it("sends the trace on with every reconcile request a resync tick emits, as W3C headers and as the extension", async () => {
    nock(API)
      .get("/apis/nvidia.com/v1alpha1/dynamopoolrelays")
      .query(true)
      .reply(
        200,
        dprTable([{ metadata: { name: "g1", namespace: "team-a", generation: 2 }, status: { observedGeneration: 1 } }]),
      );
    sunk.length = 0;
    const tick: CloudEvent = {
      specversion: "1.0",
      id: "p1",
      type: "dev.knative.sources.ping",
      source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
      time: "2026-03-01T00:00:00Z",
      extensions: { traceparent: PARENT },
      datacontenttype: "application/json",
      data: {},
    };
    expect((await binary("ticking", tick)).status).toBe(204);
    expect(sunk).toHaveLength(1);
    const { headers } = sunk[0]!;
    expect(headers["ce-type"]).toBe(EventType.Reconcile);
    expect(headers["traceparent"]).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(headers["ce-traceparent"]).toBe(headers["traceparent"]);
    expect(logs.at(-1)).toMatchObject({ function: "ticking", trace_id: TRACE, emitted: 1 });
  });
});
