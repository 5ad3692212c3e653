// What the adapter puts on the wire for each operation (paths, query strings, headers, bodies) and
// how it reads the answers, against a loopback API server that records every request.
import http from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KubeClient, retryAfter, type KubeObject } from "./client.ts";
import { ApiError } from "./errors.ts";
import { plain, rejectedWith } from "../../test/kube-support.ts";

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
interface Answer {
  status?: number;
  /** A string goes as it is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => (s.closeAllConnections(), new Promise((r) => s.close(r)))));
});

/** A loopback API server answering each request with `answer`; `seen` records what it got. */
async function serve(answer: (req: Seen) => Answer = () => ({ body: {} })): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const got = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      seen.push(got);
      const a = answer(got);
      res.writeHead(a.status ?? 200, { "content-type": "application/json", ...a.headers });
      res.end(a.body === undefined ? "" : typeof a.body === "string" ? a.body : JSON.stringify(a.body));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const lines = (seen: Seen[]) => seen.map((s) => `${s.method} ${s.url}`);
const status = (code: number, reason: string, message: string): Answer => ({
  status: code,
  body: { kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code },
});

const failure = (p: Promise<unknown>) => rejectedWith(p, ApiError);

const configMap: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "b", namespace: "a" },
  data: { k: "é" },
};

describe("what a request puts on the wire", () => {
  it("sends a body as JSON with its type and byte length, and asks for JSON", async () => {
    const api = await serve();
    await new KubeClient(plain(api.url)).request("POST", "/api/v1/namespaces/a/configmaps", configMap);
    expect(api.seen[0]!.body).toBe(
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"a"},"data":{"k":"é"}}',
    );
    expect(api.seen[0]!.headers["content-type"]).toBe("application/json");
    // 95 characters, one of them two bytes in UTF-8.
    expect(api.seen[0]!.headers["content-length"]).toBe("96");
    expect(api.seen[0]!.headers.accept).toBe("application/json");
  });

  it("sends a GET with no body, no content type and no length", async () => {
    const api = await serve();
    await new KubeClient(plain(api.url)).request("GET", "/api/v1/namespaces");
    expect(api.seen[0]!.headers.accept).toBe("application/json");
    expect(api.seen[0]!.body).toBe("");
    expect(api.seen[0]!.headers["content-type"]).toBeUndefined();
    expect(api.seen[0]!.headers["content-length"]).toBeUndefined();
  });

  it("carries the credentials' headers, and acts as another user only when asked to", async () => {
    const api = await serve();
    const kube = new KubeClient({
      server: api.url,
      httpsOptions: async () => ({ headers: { Authorization: "Bearer t0ken" } }),
    });
    await kube.as("system:serviceaccount:team:relay").request("GET", "/api/v1/namespaces/team/pods");
    await kube.request("GET", "/api/v1/namespaces");
    expect(api.seen[0]!.headers.authorization).toBe("Bearer t0ken");
    expect(api.seen[0]!.headers["impersonate-user"]).toBe("system:serviceaccount:team:relay");
    expect(api.seen[1]!.headers.authorization).toBe("Bearer t0ken");
    expect(api.seen[1]!.headers["impersonate-user"]).toBeUndefined();
  });

  it("keeps acting as the other user in a fork, which counts its own requests", async () => {
    const api = await serve();
    const relay = new KubeClient(plain(api.url)).as("system:serviceaccount:team:relay");
    const invocation = relay.fork();
    await invocation.request("DELETE", "/api/v1/namespaces/team/pods/p");
    expect(api.seen[0]!.headers["impersonate-user"]).toBe("system:serviceaccount:team:relay");
    expect(invocation.stats).toEqual({ reads: 0, writes: 1 });
    expect(relay.stats).toEqual({ reads: 0, writes: 0 });
  });
});

describe("how an answer is read", () => {
  const cases: { name: string; answer: Answer; result: unknown }[] = [
    { name: "a 200's JSON body is the result", answer: { body: { kind: "Namespace" } }, result: { kind: "Namespace" } },
    {
      name: "a 201's JSON body is the result",
      answer: { status: 201, body: { kind: "ConfigMap" } },
      result: { kind: "ConfigMap" },
    },
    { name: "an empty body is undefined", answer: { status: 200 }, result: undefined },
    {
      name: "a body that is not JSON is passed on as text",
      answer: { body: "ok", headers: { "content-type": "text/plain" } },
      result: "ok",
    },
  ];
  it.each(cases)("$name", async ({ answer, result }) => {
    const api = await serve(() => answer);
    expect(await new KubeClient(plain(api.url)).request("GET", "/healthz")).toEqual(result);
  });

  const errors: { name: string; answer: Answer; status: number; reason: string; message: string }[] = [
    {
      name: "a 404 Status gives its reason and message",
      answer: status(404, "NotFound", 'configmaps "b" not found'),
      status: 404,
      reason: "NotFound",
      message: 'GET /api/v1/namespaces/a/configmaps/b: 404 configmaps "b" not found',
    },
    {
      name: "a 300 is no success",
      answer: { status: 300, body: "see other", headers: { "content-type": "text/plain" } },
      status: 300,
      reason: "Unknown",
      message: "GET /api/v1/namespaces/a/configmaps/b: 300 see other",
    },
    {
      name: "a proxy's text answer is an Unknown error quoting the text",
      answer: { status: 502, body: "upstream connect error", headers: { "content-type": "text/plain" } },
      status: 502,
      reason: "Unknown",
      message: "GET /api/v1/namespaces/a/configmaps/b: 502 upstream connect error",
    },
  ];
  it.each(errors)("$name", async ({ answer, status: code, reason, message }) => {
    const api = await serve(() => answer);
    const err = await failure(new KubeClient(plain(api.url)).request("GET", "/api/v1/namespaces/a/configmaps/b"));
    expect({
      status: err.status,
      reason: err.reason,
      message: err.message,
      retryAfterSeconds: err.retryAfterSeconds,
    }).toEqual({ status: code, reason, message, retryAfterSeconds: undefined });
  });
});

describe("an answer below 200", () => {
  it("is no success, though no API server sends one (a broken proxy might)", async () => {
    const raw = createServer((c) =>
      c.once("data", () => c.end("HTTP/1.1 099 Odd\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nhi")),
    );
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    try {
      const err = await failure(
        new KubeClient(plain(`http://127.0.0.1:${(raw.address() as AddressInfo).port}`)).request("GET", "/healthz"),
      );
      expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({
        status: 99,
        reason: "Unknown",
        message: "GET /healthz: 99 hi",
      });
    } finally {
      raw.close();
    }
  });
});

describe("retryAfter reads a 429's or 503's Retry-After in whole seconds", () => {
  const cases: { status: number; header: string | undefined; seconds: number | undefined }[] = [
    { status: 429, header: "2", seconds: 2 },
    { status: 503, header: "5", seconds: 5 },
    { status: 429, header: " 7 ", seconds: 7 },
    { status: 429, header: "0", seconds: 0 },
    { status: 500, header: "5", seconds: undefined },
    { status: 409, header: "5", seconds: undefined },
    { status: 429, header: undefined, seconds: undefined },
    { status: 429, header: "", seconds: undefined },
    { status: 429, header: "1.5", seconds: undefined },
    { status: 429, header: "3s", seconds: undefined },
    { status: 429, header: "in 3", seconds: undefined },
    { status: 503, header: "Wed, 21 Oct 2015 07:28:00 GMT", seconds: undefined },
  ];
  it.each(cases)("$status with $header: $seconds", ({ status: code, header, seconds }) => {
    expect(retryAfter(code, header)).toBe(seconds);
  });
});

describe("discovery of kinds the product does not list", () => {
  const widgets = {
    kind: "APIResourceList",
    groupVersion: "example.com/v1",
    resources: [
      { name: "widgets/status", kind: "Widget", namespaced: true },
      { name: "gadgets", kind: "Gadget", namespaced: false },
      { name: "widgets", kind: "Widget", namespaced: true },
    ],
  };

  it("asks the group's discovery document once per kind and remembers each kind's resource", async () => {
    const api = await serve(() => ({ body: widgets }));
    const kube = new KubeClient(plain(api.url));
    expect(await kube.resource("example.com/v1", "Widget")).toEqual({
      group: "example.com",
      version: "v1",
      plural: "widgets",
      namespaced: true,
    });
    expect(await kube.resource("example.com/v1", "Gadget")).toEqual({
      group: "example.com",
      version: "v1",
      plural: "gadgets",
      namespaced: false,
    });
    expect(await kube.resource("example.com/v1", "Widget")).toEqual({
      group: "example.com",
      version: "v1",
      plural: "widgets",
      namespaced: true,
    });
    expect(await kube.resource("example.com/v1", "Gadget")).toEqual({
      group: "example.com",
      version: "v1",
      plural: "gadgets",
      namespaced: false,
    });
    expect(lines(api.seen)).toEqual(["GET /apis/example.com/v1", "GET /apis/example.com/v1"]);
  });

  it("asks /api/v1 for a core kind", async () => {
    const api = await serve(() => ({
      body: { resources: [{ name: "limitranges", kind: "LimitRange", namespaced: true }] },
    }));
    expect(await new KubeClient(plain(api.url)).resource("v1", "LimitRange")).toEqual({
      group: "",
      version: "v1",
      plural: "limitranges",
      namespaced: true,
    });
    expect(lines(api.seen)).toEqual(["GET /api/v1"]);
  });

  it("needs no discovery for a kind the product lists", async () => {
    const api = await serve();
    expect(await new KubeClient(plain(api.url)).resource("nvidia.com/v1alpha1", "DynamoPoolRelay")).toEqual({
      group: "nvidia.com",
      version: "v1alpha1",
      plural: "dynamopoolrelays",
      namespaced: true,
    });
    expect(api.seen).toEqual([]);
  });

  it("answers 404 NotFound for a kind the API server does not serve, even as a subresource", async () => {
    const api = await serve(() => ({
      body: { resources: [{ name: "widgets/gizmo", kind: "Gizmo", namespaced: true }] },
    }));
    const err = await failure(new KubeClient(plain(api.url)).resource("example.com/v1", "Gizmo"));
    expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({
      status: 404,
      reason: "NotFound",
      message: "the API server does not serve kind Gizmo in example.com/v1",
    });
  });
});

describe("reads", () => {
  it("get gives the object, and undefined when the API server answers 404", async () => {
    const api = await serve((req) =>
      req.url.endsWith("/b") ? { body: configMap } : status(404, "NotFound", 'configmaps "c" not found'),
    );
    const kube = new KubeClient(plain(api.url));
    expect(await kube.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "a", name: "b" })).toEqual(configMap);
    expect(await kube.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "a", name: "c" })).toBeUndefined();
    expect(lines(api.seen)).toEqual(["GET /api/v1/namespaces/a/configmaps/b", "GET /api/v1/namespaces/a/configmaps/c"]);
  });

  it("get passes on any other error", async () => {
    const api = await serve(() => status(403, "Forbidden", "configmaps is forbidden"));
    const err = await failure(
      new KubeClient(plain(api.url)).get({ apiVersion: "v1", kind: "ConfigMap", namespace: "a", name: "b" }),
    );
    expect({ status: err.status, reason: err.reason }).toEqual({ status: 403, reason: "Forbidden" });
  });

  it("list asks with the label selector, when there is one, and gives the items", async () => {
    const api = await serve((req) => ({ body: req.url.includes("?") ? { items: [configMap] } : {} }));
    const kube = new KubeClient(plain(api.url));
    expect(await kube.list("v1", "ConfigMap", "a", "app=web,tier in (x)")).toEqual([configMap]);
    expect(await kube.list("v1", "ConfigMap", "a")).toEqual([]);
    expect(await kube.list("v1", "ConfigMap", undefined, "")).toEqual([]);
    expect(lines(api.seen)).toEqual([
      "GET /api/v1/namespaces/a/configmaps?labelSelector=app%3Dweb%2Ctier%20in%20(x)",
      "GET /api/v1/namespaces/a/configmaps",
      "GET /api/v1/configmaps",
    ]);
  });

  it("listTablePages asks for a Table without the objects, and follows the continue token page by page", async () => {
    const pages: Record<string, Answer> = {
      "": { body: { kind: "Table", rows: [{ cells: ["a"] }, { cells: ["b"] }], metadata: { continue: "tok/1" } } },
      "tok/1": { body: { kind: "Table", rows: [{ cells: ["c"] }], metadata: { continue: "tok2" } } },
      tok2: { body: { kind: "Table", metadata: { continue: "" } } },
    };
    const api = await serve((req) => pages[new URL(req.url, "http://x").searchParams.get("continue") ?? ""]!);
    const got: unknown[] = [];
    for await (const page of new KubeClient(plain(api.url)).listTablePages("nvidia.com/v1alpha1", "DynamoPoolRelay", 2))
      got.push(page);
    expect(got).toEqual([pages[""]!.body, pages["tok/1"]!.body, pages["tok2"]!.body]);
    expect(lines(api.seen)).toEqual([
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?limit=2&includeObject=None",
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?limit=2&includeObject=None&continue=tok%2F1",
      "GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?limit=2&includeObject=None&continue=tok2",
    ]);
    expect(api.seen.map((s) => s.headers.accept)).toEqual(
      Array(3).fill("application/json;as=Table;v=v1;g=meta.k8s.io"),
    );
  });

  it("listTablePages stops when no continue token comes", async () => {
    const api = await serve(() => ({ body: { kind: "Table", rows: [{ cells: ["a"] }] } }));
    const got: unknown[] = [];
    for await (const page of new KubeClient(plain(api.url)).listTablePages(
      "nvidia.com/v1alpha1",
      "DynamoPoolRelay",
      500,
    ))
      got.push(page);
    expect(got).toEqual([{ kind: "Table", rows: [{ cells: ["a"] }] }]);
    expect(lines(api.seen)).toEqual(["GET /apis/nvidia.com/v1alpha1/dynamopoolrelays?limit=500&includeObject=None"]);
  });
});

describe("writes", () => {
  const cases: { name: string; options: { force?: boolean; dryRun?: boolean } | undefined; query: string }[] = [
    { name: "names the field manager", options: undefined, query: "fieldManager=poolrelay" },
    { name: "forces only when asked", options: { force: true }, query: "fieldManager=poolrelay&force=true" },
    { name: "dry-runs only when asked", options: { dryRun: true }, query: "fieldManager=poolrelay&dryRun=All" },
    {
      name: "can force and dry-run at once",
      options: { force: true, dryRun: true },
      query: "fieldManager=poolrelay&force=true&dryRun=All",
    },
    {
      name: "neither forces nor dry-runs when told false",
      options: { force: false, dryRun: false },
      query: "fieldManager=poolrelay",
    },
  ];
  it.each(cases)("apply is a server-side apply PATCH that $name", async ({ options, query }) => {
    const api = await serve((req) => ({ body: JSON.parse(req.body) as unknown }));
    const kube = new KubeClient(plain(api.url));
    expect(await (options ? kube.apply(configMap, "poolrelay", options) : kube.apply(configMap, "poolrelay"))).toEqual(
      configMap,
    );
    expect(lines(api.seen)).toEqual([`PATCH /api/v1/namespaces/a/configmaps/b?${query}`]);
    expect(api.seen[0]!.headers["content-type"]).toBe("application/apply-patch+yaml");
    expect(JSON.parse(api.seen[0]!.body)).toEqual(configMap);
  });

  it("create POSTs the object to its collection", async () => {
    const api = await serve((req) => ({
      status: 201,
      body: { ...(JSON.parse(req.body) as object), metadata: { name: "b", namespace: "a", uid: "u-1" } },
    }));
    const created = await new KubeClient(plain(api.url)).create(configMap);
    expect(created).toEqual({ ...configMap, metadata: { name: "b", namespace: "a", uid: "u-1" } });
    expect(lines(api.seen)).toEqual(["POST /api/v1/namespaces/a/configmaps"]);
    expect(JSON.parse(api.seen[0]!.body)).toEqual(configMap);
  });

  it("create never overwrites: a name taken is the API server's 409 AlreadyExists", async () => {
    const api = await serve(() => status(409, "AlreadyExists", 'configmaps "b" already exists'));
    const err = await failure(new KubeClient(plain(api.url)).create(configMap));
    expect({ status: err.status, reason: err.reason, message: err.message }).toEqual({
      status: 409,
      reason: "AlreadyExists",
      message: 'POST /api/v1/namespaces/a/configmaps: 409 configmaps "b" already exists',
    });
  });

  const ref = { apiVersion: "v1", kind: "Service", namespace: "team", name: "relay" };
  it("deleteExact deletes in the background on condition of the UID", async () => {
    const api = await serve(() => ({ body: { kind: "Status", status: "Success" } }));
    expect(await new KubeClient(plain(api.url)).deleteExact(ref, "uid-7")).toBe("deleted");
    expect(lines(api.seen)).toEqual(["DELETE /api/v1/namespaces/team/services/relay"]);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      preconditions: { uid: "uid-7" },
      propagationPolicy: "Background",
    });
    expect(api.seen[0]!.headers["content-type"]).toBe("application/json");
  });

  it("deleteExact says gone when the object no longer exists", async () => {
    const api = await serve(() => status(404, "NotFound", 'services "relay" not found'));
    expect(await new KubeClient(plain(api.url)).deleteExact(ref, "uid-7")).toBe("gone");
  });

  const deleteErrors = [
    {
      name: "another object now has the name (the UID precondition fails)",
      answer: status(409, "Conflict", "Precondition failed: UID in precondition: uid-7, UID in object meta: uid-8"),
      code: 409,
    },
    { name: "the caller may not delete", answer: status(403, "Forbidden", 'services "relay" is forbidden'), code: 403 },
    { name: "the API server fails", answer: status(500, "InternalError", "etcd timeout"), code: 500 },
  ];
  it.each(deleteErrors)("deleteExact passes on the error when $name", async ({ answer, code }) => {
    const api = await serve(() => answer);
    expect((await failure(new KubeClient(plain(api.url)).deleteExact(ref, "uid-7"))).status).toBe(code);
  });

  const relay: KubeObject = {
    apiVersion: "nvidia.com/v1alpha1",
    kind: "DynamoPoolRelay",
    metadata: { name: "r", namespace: "ns", resourceVersion: "41" },
    status: { phase: "Ready" },
  };
  it("replaceStatus PUTs the object, resourceVersion included, to the status subresource", async () => {
    const api = await serve((req) => ({
      body: { ...(JSON.parse(req.body) as object), metadata: { name: "r", namespace: "ns", resourceVersion: "42" } },
    }));
    expect(await new KubeClient(plain(api.url)).replaceStatus(relay)).toEqual({
      ...relay,
      metadata: { name: "r", namespace: "ns", resourceVersion: "42" },
    });
    expect(lines(api.seen)).toEqual(["PUT /apis/nvidia.com/v1alpha1/namespaces/ns/dynamopoolrelays/r/status"]);
    expect(JSON.parse(api.seen[0]!.body)).toEqual(relay);
  });

  it("replaceStatus fails with 409 when the object changed meanwhile", async () => {
    const api = await serve(() =>
      status(
        409,
        "Conflict",
        "the object has been modified; please apply your changes to the latest version and try again",
      ),
    );
    const err = await failure(new KubeClient(plain(api.url)).replaceStatus(relay));
    expect({ status: err.status, reason: err.reason }).toEqual({ status: 409, reason: "Conflict" });
  });
});
