// What a handler's ctx.emit does with the sink's answer, through serve(): which answers count as
// taken, and the error a handler gets (and the shell answers, when the handler lets it through)
// for a refusal, an unreachable sink and no sink at all. And the production environment's own
// parts: its clock, its log and its API connection.
import { createServer, type IncomingMessage } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { toBinary, type CloudEvent } from "../../shared/cloudevent.ts";
import { parseConfig } from "../../shared/config.ts";
import { EventType, productEvent } from "../../shared/events.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { FakeKube } from "../../test/unit/fake-kube.ts";
import type { Handler } from "./handler.ts";
import { defaultEnvironment, serve } from "./serve.ts";
import type { SinkPost } from "./sink.ts";

const NOW = "2026-03-01T00:00:00Z";
const SINK = "http://broker-ingress.knative-eventing.svc.cluster.local/dynamo-system/dynamo-pool-relay";
const trigger: CloudEvent = {
  specversion: "1.0",
  id: "t1",
  type: "com.example.trigger",
  source: "/test",
  time: NOW,
  datacontenttype: "application/json",
  extensions: {},
  data: {},
};
const emitted = productEvent(
  EventType.Reconcile,
  { namespace: "team-a", name: "g1", cause: "Resync" },
  { source: "/test", cause: "c", time: NOW },
);

/** A handler that emits one event and lets any failure through; `caught` is the error emit threw. */
function emitting() {
  const seen: { caught?: unknown } = {};
  const handler: Handler = async (_event, ctx) => {
    try {
      await ctx.emit(emitted);
    } catch (err) {
      seen.caught = err;
      throw err;
    }
    return { decision: "Emitted" };
  };
  return { handler, seen };
}

async function invoke(handler: Handler, post: SinkPost, env: Record<string, string> = { K_SINK: SINK }) {
  const answer = { status: 0, headers: {} as Record<string, string>, body: "" };
  const res = {
    status: (code: number) => ((answer.status = code), res),
    set: (h: Record<string, string>) => (Object.assign(answer.headers, h), res),
    send: (body?: string) => void (answer.body = body ?? ""),
    end: () => undefined,
  };
  const lines: string[] = [];
  const { headers, body } = toBinary(trigger);
  await serve("emitting", handler, {
    kube: async () => new FakeKube().client,
    config: parseConfig(env),
    now: () => NOW,
    post,
    log: (l) => lines.push(l),
  })({ method: "POST", headers, rawBody: Buffer.from(body) }, res);
  return { answer, log: JSON.parse(lines[0]!) as Record<string, unknown> };
}

describe("ctx.emit", () => {
  it.each([200, 201, 202, 204, 299])("counts an answer %i as taken", async (code) => {
    const { handler, seen } = emitting();
    const { answer } = await invoke(handler, async () => code);
    expect(seen.caught).toBeUndefined();
    expect(answer.status).toBe(204);
  });

  it.each([
    { code: 199, status: 503 },
    { code: 300, status: 503 },
    { code: 400, status: 503 },
    { code: 404, status: 503 },
    { code: 499, status: 503 },
    { code: 500, status: 500 },
    { code: 503, status: 503 },
  ])(
    "refuses an answer $code as a transient failure (status $status), which the shell answers 503",
    async ({ code, status }) => {
      const { handler, seen } = emitting();
      const { answer, log } = await invoke(handler, async () => code);
      expect(seen.caught).toBeInstanceOf(ApiError);
      expect(seen.caught).toMatchObject({
        status,
        reason: "SinkRefused",
        message: `the sink answered ${code} to event ${emitted.id}`,
        transient: true,
      });
      expect(answer.status).toBe(503);
      expect(answer.headers).toEqual({ "content-type": "application/json" });
      expect(log).toMatchObject({ status: 503, error: `the sink answered ${code} to event ${emitted.id}` });
    },
  );

  it("fails transiently when the sink cannot be reached, naming it and why", async () => {
    const { handler, seen } = emitting();
    const { answer } = await invoke(handler, async () => {
      throw new Error("connect ECONNREFUSED 10.96.0.10:80");
    });
    expect(seen.caught).toMatchObject({
      status: 0,
      reason: "SinkUnreachable",
      message: `the sink ${SINK} is unreachable: connect ECONNREFUSED 10.96.0.10:80`,
      transient: true,
    });
    expect(answer.status).toBe(503);
  });

  it("sends nothing without K_SINK, and says which binding is missing", async () => {
    const { handler, seen } = emitting();
    const posts: string[] = [];
    const { answer } = await invoke(handler, async (url) => (posts.push(url), 202), {});
    expect(posts).toEqual([]);
    expect(seen.caught).toBeInstanceOf(Error);
    expect((seen.caught as Error).message).toBe(
      "K_SINK is not set: this function cannot emit events (bind it to the Broker with a SinkBinding)",
    );
    expect(answer.status).toBe(500);
  });

  it("sends nothing once the invocation's deadline has passed, and says so", async () => {
    const posts: string[] = [];
    const seen: { caught?: unknown } = {};
    // Emits only after its deadline of 100 ms (the least allowed) has passed.
    const late: Handler = async (_event, ctx) => {
      await new Promise((r) => setTimeout(r, 150));
      await ctx.emit(emitted).catch((err: unknown) => {
        seen.caught = err;
        throw err;
      });
      return { decision: "Emitted" };
    };
    const { answer, log } = await invoke(late, async (url) => (posts.push(url), 202), {
      K_SINK: SINK,
      INVOCATION_DEADLINE_SECONDS: "0.1",
    });
    expect(posts).toEqual([]);
    expect(seen.caught).toMatchObject({
      reason: "DeadlineExceeded",
      message: `event ${emitted.id} not sent: the invocation's deadline has passed`,
      transient: true,
    });
    expect(answer.status).toBe(503);
    expect(log).toMatchObject({ status: 503, deadlineExceeded: true });
  });

  it("posts the event to K_SINK in binary mode, the signal not yet aborted", async () => {
    const posts: { url: string; headers: Record<string, string>; body: string; aborted: boolean }[] = [];
    const { handler } = emitting();
    await invoke(
      handler,
      async (url, headers, body, signal) => (posts.push({ url, headers, body, aborted: signal.aborted }), 202),
    );
    expect(posts).toEqual([
      { url: SINK, headers: toBinary(emitted).headers, body: toBinary(emitted).body, aborted: false },
    ]);
  });
});

describe("the invocation's log line and timer", () => {
  it("logs how long the invocation took on the environment's clock, and leaves no timer behind", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const times = [1_000, 1_250.4];
      const clock = { now: () => times.shift() ?? 9_999, sleep: async () => {} };
      const lines: string[] = [];
      const res = { status: () => res, set: () => res, send: () => undefined, end: () => undefined };
      const { headers, body } = toBinary(trigger);
      await serve("timed", async () => ({ decision: "Done" }), {
        kube: async () => new FakeKube().client,
        config: parseConfig({}),
        now: () => NOW,
        post: async () => 202,
        log: (l) => lines.push(l),
        clock,
      })({ method: "POST", headers, rawBody: Buffer.from(body) }, res);
      expect(JSON.parse(lines[0]!)).toMatchObject({ function: "timed", decision: "Done", status: 204, ms: 250 });
      expect(JSON.parse(lines[0]!)).not.toHaveProperty("deadlineExceeded");
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("the production environment", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it("tells the time in RFC 3339 to the second, in UTC", () => {
    vi.useFakeTimers({ now: Date.parse("2026-03-01T12:34:56.789Z"), toFake: ["Date"] });
    try {
      expect(defaultEnvironment("apply").now()).toBe("2026-03-01T12:34:56Z");
    } finally {
      vi.useRealTimers();
    }
  });

  it("logs each line on its own line of stdout", () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation(
      (chunk: string | Uint8Array) => (written.push(String(chunk)), true),
    );
    const env = defaultEnvironment("apply");
    env.log('{"a":1}');
    env.log('{"b":2}');
    expect(written).toEqual(['{"a":1}\n', '{"b":2}\n']);
  });

  it("connects once, to the API server of the kubeconfig KUBECONFIG names", async () => {
    const seen: string[] = [];
    const api = createServer((req: IncomingMessage, res) => {
      seen.push(`${req.method} ${req.url}`);
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ kind: "Status", reason: "NotFound" }));
    });
    await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
    try {
      const dir = mkdtempSync(join(tmpdir(), "kubeconfig-"));
      const server = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
      writeFileSync(
        join(dir, "config"),
        JSON.stringify({
          apiVersion: "v1",
          kind: "Config",
          "current-context": "c",
          clusters: [{ name: "k", cluster: { server } }],
          users: [{ name: "u", user: {} }],
          contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
        }),
      );
      vi.stubEnv("KUBECONFIG", join(dir, "config"));
      const env = defaultEnvironment("apply");
      const kube = await env.kube();
      expect(await env.kube()).toBe(kube);
      expect(await kube.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "c1" })).toBeUndefined();
      expect(seen).toEqual(["GET /api/v1/namespaces/team-a/configmaps/c1"]);
    } finally {
      api.closeAllConnections();
      await new Promise((r) => api.close(r));
    }
  });
});
