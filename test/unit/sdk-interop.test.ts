// The CloudEvents SDK and the functions, both ways, over real HTTP in the Functions Framework with
// the Kubernetes API mocked (nock): what the SDK emits in binary, structured and batch mode every
// function takes as the event the SDK made, and every reply and emitted event of a function the
// SDK reads and holds to its strict validation. And the SDK stays out of the functions' bundles,
// so it costs their cold start nothing.
import { http } from "@google-cloud/functions-framework";
import { getTestServer } from "@google-cloud/functions-framework/testing";
import { CloudEvent, CONSTANTS, HTTP, Mode, emitterFor, type Message } from "cloudevents";
import { build } from "esbuild";
import nock from "nock";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dprTable } from "../builders.ts";
import { apply } from "../../functions/apply/handler.ts";
import { deadLetter } from "../../functions/dead-letter/handler.ts";
import { eligibility } from "../../functions/eligibility/handler.ts";
import type { Handler } from "../../functions/runtime/handler.ts";
import { serve } from "../../functions/runtime/serve.ts";
import { sinkPost } from "../../functions/runtime/sink.ts";
import { status } from "../../functions/status/handler.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType } from "../../shared/events.ts";
import { KubeClient } from "../../shared/kube/client.ts";

const API = "https://kube.test";
const NOW = "2026-03-01T00:00:00Z";
const logs: Record<string, unknown>[] = [];
const servers: Record<string, { server: Server; url: string }> = {};
const sunk: { headers: IncomingHttpHeaders; body: string }[] = [];
let sink: Server;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
}

async function start(name: string, handler: Handler, env: Record<string, string> = {}) {
  const kube = new KubeClient({ server: API, httpsOptions: async () => ({}) });
  http(
    `${name}-sdk`,
    serve(name, handler, {
      kube: async () => kube,
      config: parseConfig(env),
      now: () => NOW,
      post: sinkPost({}),
      log: (l) => logs.push(JSON.parse(l) as Record<string, unknown>),
    }),
  );
  const server = getTestServer(`${name}-sdk`);
  servers[name] = { server, url: await listen(server) };
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  // The Broker, for eligibility's resync emits and dead-letter's requests: it keeps what it is sent.
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on(
      "end",
      () => (sunk.push({ headers: req.headers, body: Buffer.concat(chunks).toString() }), res.writeHead(202).end()),
    );
  });
  const sinkUrl = await listen(sink);
  await start("eligibility", eligibility, { K_SINK: sinkUrl });
  await start("apply", apply);
  await start("status", status);
  await start("dead-letter", deadLetter, { K_SINK: sinkUrl });
});
afterEach(() => {
  // Cleaned first, so one test's unmet mocks fail only that test.
  const pending = nock.pendingMocks();
  nock.cleanAll();
  expect(pending).toEqual([]);
});
afterAll(async () => {
  nock.enableNetConnect();
  await Promise.all([sink, ...Object.values(servers).map((s) => s.server)].map((s) => new Promise((r) => s.close(r))));
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The SDK's emitter, over fetch: its own httpTransport resolves without the status code. */
function emitter(fn: string, mode: Mode.BINARY | Mode.STRUCTURED) {
  const transport = async (message: Message): Promise<Answer> => {
    const res = await fetch(servers[fn]!.url, {
      method: "POST",
      headers: message.headers as Record<string, string>,
      body: message.body as string,
    });
    return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
  };
  return emitterFor(transport, { binding: HTTP, mode });
}

/** The SDK has no batch serializer: a batch is its JSON format of each event, in an array. */
async function batch(fn: string, events: CloudEvent<unknown>[]): Promise<Answer> {
  const res = await fetch(servers[fn]!.url, {
    method: "POST",
    headers: { "content-type": CONSTANTS.MIME_CE_BATCH },
    body: JSON.stringify(events),
  });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

const MODES = ["binary", "structured", "batch"] as const;

function send(fn: string, mode: (typeof MODES)[number], event: CloudEvent<unknown>): Promise<Answer> {
  if (mode === "batch") return batch(fn, [event]);
  return emitter(fn, mode === "binary" ? Mode.BINARY : Mode.STRUCTURED)(event) as Promise<Answer>;
}

/**
 * A function's reply (or emitted event) as the SDK reads it, held to its strict validation, and
 * checked against the wire: the SDK's reader would have made up an id or a time, not refused.
 */
function sdkRead(headers: Record<string, string | string[] | undefined>, body: string): CloudEvent<unknown> {
  const read = HTTP.toEvent({ headers, body });
  expect(Array.isArray(read)).toBe(false);
  const event = new CloudEvent<unknown>({ ...(read as CloudEvent<unknown>) }, true);
  expect(event.validate()).toBe(true);
  expect(event.id).toBe(headers["ce-id"]);
  expect(event.source).toBe(headers["ce-source"]);
  expect(Date.parse(event.time!)).toBe(Date.parse(headers["ce-time"] as string));
  return event;
}

const dprPath = "/apis/nvidia.com/v1alpha1/namespaces/team-a/dynamopoolrelays/g1";
const dgdPath = "/apis/nvidia.com/v1beta1/namespaces/team-a/dynamographdeployments/g1";
const childPaths = [
  "/api/v1/namespaces/team-a/serviceaccounts/g1-pool-relay",
  "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/g1-pool-relay",
  "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/g1-pool-relay",
  "/api/v1/namespaces/team-a/configmaps/g1-pool-relay",
  "/apis/apps/v1/namespaces/team-a/deployments/g1-pool-relay",
  "/api/v1/namespaces/team-a/services/g1-pool-relay",
];
const notFound = { kind: "Status", reason: "NotFound" };
const dpr = (spec: Record<string, unknown> = { image: "relay:1", clusterID: "c" }) => ({
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoPoolRelay",
  metadata: { name: "g1", namespace: "team-a", uid: "u1", generation: 1, resourceVersion: "5" },
  spec,
});
const dgd = {
  apiVersion: "nvidia.com/v1beta1",
  kind: "DynamoGraphDeployment",
  metadata: { name: "g1", namespace: "team-a" },
  spec: { components: [{ name: "w", type: "worker" }] },
};
const key = { namespace: "team-a", name: "g1" };
/** Made as an SDK user makes events: no id, no time; the SDK supplies both. */
const sdkEvent = (type: string, data: unknown, extensions: Record<string, string> = {}) =>
  new CloudEvent<unknown>({ type, source: "/sdk-test", datacontenttype: "application/json", data, ...extensions });

function children404() {
  for (const p of childPaths) nock(API).get(p).reply(404, notFound);
  nock(API).get("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices").query(true).reply(200, { items: [] });
}

describe("events the SDK emits are taken by every function, in binary, structured and batch mode", () => {
  it.each(MODES)("eligibility, %s: a DGD change becomes a reconcile request for its DynamoPoolRelay", async (mode) => {
    nock(API).get(dprPath).reply(200, dpr());
    const event = sdkEvent("dev.knative.apiserver.resource.update", dgd, { kind: "DynamoGraphDeployment" });
    const res = await send("eligibility", mode, event);
    expect(res.status).toBe(200);
    expect(logs.at(-1)).toMatchObject({
      function: "eligibility",
      event: { id: event.id, type: event.type, source: "/sdk-test" },
      decision: "Reconcile",
    });
    expect(sdkRead(res.headers, res.text)).toMatchObject({
      type: EventType.Reconcile,
      subject: "team-a/g1",
      data: { ...key, cause: "DGDChanged" },
    });
  });

  it.each(MODES)("apply, %s: a reconcile request is decided from the objects read", async (mode) => {
    nock(API)
      .get(dprPath)
      .reply(200, dpr({ image: "relay:1", clusterID: " padded " }));
    nock(API).get(dgdPath).reply(404, notFound);
    const event = sdkEvent(EventType.Reconcile, { ...key, cause: "DGDChanged" });
    const res = await send("apply", mode, event);
    expect(res.status).toBe(200);
    expect(logs.at(-1)).toMatchObject({ function: "apply", event: { id: event.id }, decision: "Rejected" });
    expect(sdkRead(res.headers, res.text)).toMatchObject({
      type: EventType.Rejected,
      data: { ...key, reason: "InvalidSpec", message: expect.stringMatching(/spec\.clusterID/) as unknown },
    });
  });

  it.each(MODES)("status, %s: an apply report makes it read the DynamoPoolRelay again", async (mode) => {
    nock(API).get(dprPath).reply(404, notFound);
    const event = sdkEvent(EventType.Applied, {
      ...key,
      uid: "u1",
      generation: 1,
      applied: [],
      unchanged: [],
      skipped: [],
    });
    const res = await send("status", mode, event);
    expect(res.status).toBe(204);
    // No DynamoPoolRelay: neither its DGD nor any child is read.
    expect(logs.at(-1)).toMatchObject({
      function: "status",
      event: { id: event.id, type: EventType.Applied },
      decision: "Gone",
      reads: 1,
    });
  });

  it.each(MODES)("dead-letter, %s: the event is logged whole, as the SDK made it", async (mode) => {
    const event = sdkEvent(
      EventType.Reconcile,
      { ...key, cause: "Drift" },
      { knativeerrordest: "http://apply.dynamo-system.svc.cluster.local", knativeerrorcode: "422" },
    );
    const res = await send("dead-letter", mode, event);
    expect(res.status).toBe(204);
    const { deadEvent, destination } = logs.at(-1) as { deadEvent: Record<string, unknown>; destination: string };
    expect(destination).toBe("http://apply.dynamo-system.svc.cluster.local");
    expect(deadEvent).toMatchObject({ id: event.id, type: event.type, source: event.source, data: event.data });
    expect(Date.parse(deadEvent["time"] as string)).toBe(Date.parse(event.time!));
    expect(logs.at(-1)).toMatchObject({ asked: true, key });
  });

  it("refuses a batch of two with 400: a function handles one event per request", async () => {
    const res = await batch("apply", [
      sdkEvent(EventType.Reconcile, { ...key, cause: "DGDChanged" }),
      sdkEvent(EventType.Reconcile, { ...key, cause: "Drift" }),
    ]);
    expect(res.status).toBe(400);
    expect((JSON.parse(res.text) as { error: string }).error).toMatch(
      /a function handles one event per request, and this batch holds 2/,
    );
    expect(logs.at(-1)).toMatchObject({ function: "apply", status: 400, reads: 0 });
  });
});

describe("every event a function sends, the SDK reads and validates strictly", () => {
  it("apply's withdrawn reply", async () => {
    nock(API).get(dprPath).reply(200, dpr());
    nock(API).get(dgdPath).reply(404, notFound);
    // The Service and the Deployment (none), then the status of the withdrawal.
    nock(API).get(childPaths[5]!).reply(404, notFound);
    nock(API).get(childPaths[4]!).reply(404, notFound);
    nock(API).put(`${dprPath}/status`).reply(200, dpr());
    const res = await send("apply", "binary", sdkEvent(EventType.Reconcile, { ...key, cause: "DGDChanged" }));
    expect(sdkRead(res.headers, res.text)).toMatchObject({
      type: EventType.Withdrawn,
      data: { ...key, reason: "DGDNotFound", service: "absent", statusWritten: true },
    });
  });

  it("apply's applied reply", async () => {
    nock(API).get(dprPath).reply(200, dpr());
    nock(API).get(dgdPath).reply(200, dgd);
    // A new DynamoPoolRelay's children are created unread: the Deployment's dry-run, then the six.
    nock(API)
      .patch(/g1-pool-relay/)
      .times(7)
      .reply(200, { metadata: { uid: "child-uid" } });
    // Then the status those children make, shown by apply itself (a Service it created has no EndpointSlices to list).
    nock(API).put(`${dprPath}/status`).reply(200, dpr());
    const res = await send("apply", "structured", sdkEvent(EventType.Reconcile, { ...key, cause: "DGDChanged" }));
    expect(sdkRead(res.headers, res.text)).toMatchObject({
      type: EventType.Applied,
      data: {
        ...key,
        applied: ["ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Deployment", "Service"],
        statusWritten: true,
      },
    });
  });

  it("status's reconcile request on drift", async () => {
    // A pair apply has written a status for: before that, a child change awaits apply.
    const shown = { ...dpr(), status: { observedGeneration: 1 } };
    nock(API).get(dprPath).reply(200, shown);
    nock(API).get(dgdPath).reply(200, dgd);
    children404();
    nock(API).put(`${dprPath}/status`).reply(200, dpr());
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "g1-pool-relay",
        namespace: "team-a",
        labels: { "app.kubernetes.io/managed-by": "dynamo-pool-relay", "app.kubernetes.io/instance": "g1" },
      },
    };
    const res = await send(
      "status",
      "batch",
      sdkEvent("dev.knative.apiserver.resource.delete", service, { kind: "Service" }),
    );
    expect(res.status).toBe(200);
    expect(sdkRead(res.headers, res.text)).toMatchObject({
      type: EventType.Reconcile,
      data: { ...key, cause: "Drift" },
    });
  });

  it("eligibility's resync requests, emitted into the Broker", async () => {
    nock(API)
      .get("/apis/nvidia.com/v1alpha1/dynamopoolrelays")
      .query(true)
      .reply(200, dprTable([dpr()]));
    sunk.length = 0;
    const res = await send(
      "eligibility",
      "binary",
      new CloudEvent<unknown>({
        type: "dev.knative.sources.ping",
        source: "/apis/v1/namespaces/dynamo-system/pingsources/poolrelay-resync",
        time: NOW,
        data: {},
      }),
    );
    expect(res.status).toBe(204);
    expect(sunk).toHaveLength(1);
    expect(sdkRead(sunk[0]!.headers, sunk[0]!.body)).toMatchObject({
      type: EventType.Reconcile,
      data: { ...key, cause: "Resync" },
    });
  });
});

describe("why the functions keep their own parser: the SDK's readers are lenient (the measurements in docs/cli.md)", () => {
  const structured = (event: Record<string, unknown>) =>
    HTTP.toEvent({
      headers: { "content-type": CONSTANTS.MIME_CE_JSON },
      body: JSON.stringify(event),
    }) as CloudEvent<unknown>;
  const binary = (headers: Record<string, string>) =>
    HTTP.toEvent({ headers: { "content-type": "application/json", ...headers }, body: "{}" }) as CloudEvent<unknown>;
  const base = { "ce-specversion": "1.0", "ce-id": "1", "ce-type": "t", "ce-source": "/s" };

  it("makes up an id, in a structured event, a batch and its strict constructor", () => {
    expect(structured({ specversion: "1.0", type: "t", source: "/s" }).id).toMatch(/^[0-9a-f-]{36}$/);
    const [member] = HTTP.toEvent({
      headers: { "content-type": CONSTANTS.MIME_CE_BATCH },
      body: JSON.stringify([{ specversion: "1.0", type: "t", source: "/s" }]),
    }) as CloudEvent<unknown>[];
    expect(member!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new CloudEvent({ type: "t", source: "/s" }, true).id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("takes an event without source, and replaces a bad time or a missing one with the current time", () => {
    const { "ce-source": _, ...sourceless } = base;
    expect(binary(sourceless).source).toBeUndefined();
    expect(structured({ specversion: "1.0", id: "1", type: "t" }).source).toBeUndefined();
    for (const event of [
      binary({ ...base, "ce-time": "lunchtime" }),
      structured({ specversion: "1.0", id: "1", type: "t", source: "/s" }),
    ]) {
      expect(Number.isNaN(Date.parse(event.time!))).toBe(false);
      expect(event.time).not.toBe("lunchtime");
    }
  });

  it("takes specversion 0.9, even strictly, and a time without a zone when strict", () => {
    expect(binary({ ...base, "ce-specversion": "0.9" }).specversion).toBe("0.9");
    expect(new CloudEvent({ specversion: "0.9", id: "1", type: "t", source: "/s" }, true).specversion).toBe("0.9");
    expect(new CloudEvent({ id: "1", type: "t", source: "/s", time: "2018-04-05T17:31:00" }, true).time).toBe(
      "2018-04-05T17:31:00",
    );
  });
});

// A whole bundle: seconds on a machine the integration suite's node keeps busy beside this project.
describe("cold start", { timeout: 60_000 }, () => {
  const bundle = () =>
    build({
      entryPoints: ["apply", "dead-letter", "eligibility", "status"].map(
        (f) => new URL(`../../functions/${f}/index.ts`, import.meta.url).pathname,
      ),
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      write: false,
      metafile: true,
      outdir: tmpdir(),
      logLevel: "silent",
      external: ["@google-cloud/functions-framework"],
    });

  it("keeps the SDK out of every function's bundle: only the CLI loads it", async () => {
    const inputs = Object.keys((await bundle()).metafile.inputs);
    expect(inputs.some((i) => i.includes("node_modules/zod/"))).toBe(true);
    expect(inputs.filter((i) => i.includes("node_modules/cloudevents/"))).toEqual([]);
  });

  it("bundles zod/mini with its English messages only, not full zod", async () => {
    // What the output holds: the bundler reaches every locale, and keeps only those in use.
    const zod = Object.values((await bundle()).metafile.outputs)
      .flatMap((o) => Object.entries(o.inputs))
      .filter(([i, { bytesInOutput }]) => i.includes("node_modules/zod/") && bytesInOutput > 0)
      .map(([i]) => i);
    expect(zod.some((i) => i.includes("/v4/mini/"))).toBe(true);
    expect(zod.filter((i) => i.includes("/v4/classic/") || (i.includes("/locales/") && !i.endsWith("/en.js")))).toEqual(
      [],
    );
  });
});
