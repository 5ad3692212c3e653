// listAndWatch against a loopback API server whose watch stream the test writes chunk by chunk:
// the list, the watch's query, the events as they come (lines split and joined across chunks),
// the resourceVersion to resume from, and how a watch ends.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient, type KubeObject } from "./client.ts";
import { ApiError } from "./errors.ts";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => (s.closeAllConnections(), new Promise((r) => s.close(r)))));
});

interface Watch {
  url: string;
  port: number;
  seen: string[];
  headers: http.IncomingHttpHeaders[];
  /** New TCP connections the server accepted. */
  connections: number;
  /** The watch request's response, once it came; write events to it. */
  stream: () => Promise<http.ServerResponse>;
  /** Resolves when the server sees the watch connection closed. */
  closed: () => Promise<void>;
}

/** Lists answer resourceVersion "100"; a watch gets `watchStatus` and, on 200, a stream the test writes. */
async function apiServer(watchStatus = 200, watchBody = ""): Promise<Watch> {
  const seen: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  let answer!: (res: http.ServerResponse) => void;
  const streaming = new Promise<http.ServerResponse>((r) => (answer = r));
  let closedNow!: () => void;
  const closing = new Promise<void>((r) => (closedNow = r));
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    headers.push(req.headers);
    if (!req.url!.includes("watch=true"))
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end('{"kind":"List","metadata":{"resourceVersion":"100"},"items":[]}');
    res.on("close", closedNow);
    if (watchStatus !== 200)
      return void res.writeHead(watchStatus, { "content-type": "application/json" }).end(watchBody);
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    answer(res);
  });
  const w = { seen, headers, connections: 0, stream: () => streaming, closed: () => closing };
  server.on("connection", () => w.connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(w, { url: `http://127.0.0.1:${port}`, port });
}

const credentials = (server: string) => ({
  server,
  httpsOptions: async () => ({ headers: { Authorization: "Bearer t0ken" } }),
});
const relay = (name: string, resourceVersion: string) => ({
  kind: "DynamoPoolRelay",
  apiVersion: "nvidia.com/v1alpha1",
  metadata: { name, namespace: "ns", resourceVersion },
});
const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
const write = (res: http.ServerResponse, chunk: string) => new Promise<void>((r) => res.write(chunk, () => r()));

/** Events as the callback got them, and a promise for the n-th. */
function recorder() {
  const events: [string, KubeObject][] = [];
  const waiters: [number, () => void][] = [];
  const onEvent = (type: string, obj: KubeObject) => {
    events.push([type, obj]);
    for (const [n, r] of waiters) if (events.length >= n) r();
  };
  const count = (n: number) => new Promise<void>((r) => (events.length >= n ? r() : waiters.push([n, r])));
  return { events, onEvent, count };
}

const DPR = ["nvidia.com/v1alpha1", "DynamoPoolRelay"] as const;

describe("listAndWatch", () => {
  it("lists for the resourceVersion, then watches from it with bookmarks and the label selector", async () => {
    const api = await apiServer();
    const kube = new KubeClient(credentials(api.url));
    let watching = 0;
    const done = kube.listAndWatch(
      ...DPR,
      "app=web",
      () => undefined,
      new AbortController().signal,
      undefined,
      () => watching++,
    );
    const res = await api.stream();
    res.end();
    expect(await done).toBe("100");
    expect(api.seen).toEqual([
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?labelSelector=app%3Dweb",
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?watch=true&allowWatchBookmarks=true&resourceVersion=100&labelSelector=app%3Dweb",
    ]);
    expect(api.headers[1]!.authorization).toBe("Bearer t0ken");
    expect(api.headers[1]!.accept).toBe("application/json");
    expect(watching).toBe(1);
    expect(kube.stats).toEqual({ reads: 2, writes: 0 });
  });

  it("without a selector lists and watches the whole kind", async () => {
    const api = await apiServer();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      () => undefined,
      new AbortController().signal,
    );
    (await api.stream()).end();
    expect(await done).toBe("100");
    expect(api.seen).toEqual([
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays",
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?watch=true&allowWatchBookmarks=true&resourceVersion=100",
    ]);
  });

  it("resumes a watch from the given resourceVersion without listing again", async () => {
    const api = await apiServer();
    const kube = new KubeClient(credentials(api.url));
    const done = kube.listAndWatch(...DPR, undefined, () => undefined, new AbortController().signal, "250");
    (await api.stream()).end();
    expect(await done).toBe("250");
    expect(api.seen).toEqual([
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?watch=true&allowWatchBookmarks=true&resourceVersion=250",
    ]);
    expect(kube.stats).toEqual({ reads: 1, writes: 0 });
  });

  it("delivers added, modified and deleted objects with their kind, however the lines fall into chunks, and ends on the last version seen", async () => {
    const api = await apiServer();
    const rec = recorder();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      rec.onEvent,
      new AbortController().signal,
    );
    const res = await api.stream();
    // A keep-alive blank line first, two events in one chunk, one event split over two chunks.
    const { kind: _k, apiVersion: _a, ...bare } = relay("c", "103");
    await write(res, `\n${line("ADDED", relay("a", "101"))}${line("MODIFIED", relay("a", "102"))}`);
    await rec.count(2);
    const split = line("DELETED", bare);
    await write(res, split.slice(0, 20));
    await write(res, `${split.slice(20)}   \n`);
    await rec.count(3);
    await write(
      res,
      line("BOOKMARK", {
        kind: "DynamoPoolRelay",
        apiVersion: "nvidia.com/v1alpha1",
        metadata: { resourceVersion: "140" },
      }),
    );
    res.end();
    expect(await done).toBe("140");
    expect(rec.events).toEqual([
      ["ADDED", relay("a", "101")],
      ["MODIFIED", relay("a", "102")],
      ["DELETED", relay("c", "103")],
    ]);
  });

  it("keeps the last resourceVersion when an event carries none", async () => {
    const api = await apiServer();
    const rec = recorder();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      rec.onEvent,
      new AbortController().signal,
    );
    const res = await api.stream();
    await write(res, line("MODIFIED", relay("a", "120")));
    await write(res, line("BOOKMARK", {}));
    res.end();
    expect(await done).toBe("120");
    expect(rec.events).toEqual([["MODIFIED", relay("a", "120")]]);
  });

  it("stops on an ERROR event with its code and message, and closes the watch", async () => {
    const api = await apiServer();
    const rec = recorder();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      rec.onEvent,
      new AbortController().signal,
    );
    const res = await api.stream();
    await write(
      res,
      line("ERROR", {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        reason: "Expired",
        code: 410,
        message: "too old resource version: 100 (200)",
      }) + line("ADDED", relay("late", "201")),
    );
    const err = await done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect({
      status: (err as ApiError).status,
      reason: (err as ApiError).reason,
      message: (err as ApiError).message,
    }).toEqual({
      status: 410,
      reason: "WatchError",
      message: "watch /apis/nvidia.com/v1alpha1/dynamopoolrelays: too old resource version: 100 (200)",
    });
    await api.closed();
    expect(rec.events).toEqual([]);
  });

  it("an ERROR event without a code is a 500", async () => {
    const api = await apiServer();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      () => undefined,
      new AbortController().signal,
    );
    await write(await api.stream(), line("ERROR", { kind: "Status", message: "internal error" }));
    const err = await done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);
  });

  it("fails with WatchFailed when the API server refuses the watch, and frees the connection", async () => {
    const api = await apiServer(
      410,
      JSON.stringify({ kind: "Status", reason: "Gone", code: 410, message: "too old resource version" }),
    );
    const kube = new KubeClient(credentials(api.url));
    const err = await kube
      .listAndWatch(...DPR, undefined, () => undefined, new AbortController().signal, "5")
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ApiError);
    expect({
      status: (err as ApiError).status,
      reason: (err as ApiError).reason,
      message: (err as ApiError).message,
    }).toEqual({
      status: 410,
      reason: "WatchFailed",
      message: "watch /apis/nvidia.com/v1alpha1/dynamopoolrelays: 410",
    });
    // The refused watch's body was read, so its keep-alive connection carries the next request.
    await api.closed();
    await kube.request("GET", "/apis/nvidia.com/v1alpha1/dynamopoolrelays");
    expect(api.seen).toHaveLength(2);
    expect(api.connections).toBe(1);
  });

  it("on abort closes the watch and resolves with the last version seen", async () => {
    const api = await apiServer();
    const rec = recorder();
    const stop = new AbortController();
    const done = new KubeClient(credentials(api.url)).listAndWatch(...DPR, undefined, rec.onEvent, stop.signal);
    await write(await api.stream(), line("ADDED", relay("a", "107")));
    await rec.count(1);
    stop.abort();
    expect(await done).toBe("107");
    await api.closed();
    expect(rec.events).toEqual([["ADDED", relay("a", "107")]]);
  });

  it("opens no watch when aborted before it would open, and resolves with the list's version", async () => {
    const api = await apiServer();
    const stop = new AbortController();
    const kube = new KubeClient(credentials(api.url));
    // Aborted while the list is in flight, before the watch request exists.
    const done = kube.listAndWatch(...DPR, undefined, () => undefined, stop.signal);
    stop.abort();
    expect(await done).toBe("100");
    expect(api.seen).toEqual(["GET /apis/nvidia.com/v1alpha1/dynamopoolrelays"]);
  });

  it("fails when the connection is reset mid-watch", async () => {
    const api = await apiServer();
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      () => undefined,
      new AbortController().signal,
      "9",
    );
    const res = await api.stream();
    await write(res, line("ADDED", relay("a", "10")).slice(0, 10));
    res.socket!.destroy();
    await expect(done).rejects.toThrow("aborted");
  });

  it("fails when the API server cannot be reached", async () => {
    const api = await apiServer();
    servers.splice(0).forEach((s) => s.close());
    await new Promise((r) => setImmediate(r));
    const done = new KubeClient(credentials(api.url)).listAndWatch(
      ...DPR,
      undefined,
      () => undefined,
      new AbortController().signal,
      "9",
    );
    await expect(done).rejects.toThrow(`connect ECONNREFUSED 127.0.0.1:${api.port}`);
  });
});
