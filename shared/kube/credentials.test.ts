// The loader that spares a cold start client-node's config module: it must hand the API server
// exactly what client-node would (client-node is the oracle here), and leave to client-node every
// kubeconfig it does not fully understand.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { clientNodeConnection, simpleConnection, type Connection } from "./client.ts";
import { simpleCredentials } from "./credentials.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

function dir(): string {
  return mkdtempSync(join(tmpdir(), "poolrelay-cred-"));
}

/** A kubeconfig whose current context pairs `cluster` and `user` (YAML flow maps), in its own folder. */
function kubeconfig(cluster: string, user: string | undefined, extra = ""): string {
  const root = dir();
  writeFileSync(join(root, "ca.pem"), "CA FROM FILE");
  writeFileSync(join(root, "cert.pem"), "CERT FROM FILE");
  writeFileSync(join(root, "key.pem"), "KEY FROM FILE");
  writeFileSync(join(root, "token"), "token-from-file\n");
  const users = user === undefined ? "[]" : `\n- name: u\n  user: ${user}`;
  const file = join(root, "config");
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: ${cluster}\nusers: ${users}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n${extra}`,
  );
  return file;
}

/** What reaches the wire: TLS material as text, and the Authorization header. */
async function wire(c: Connection) {
  const o = await c.httpsOptions();
  const text = (v: string | Buffer | readonly unknown[] | undefined) => v?.toString();
  return {
    server: c.server,
    ca: text(o.ca),
    cert: text(o.cert),
    key: text(o.key),
    rejectUnauthorized: o.rejectUnauthorized,
    servername: o.servername,
    authorization: (o.headers as Record<string, string> | undefined)?.["Authorization"],
  };
}

const SAME_AS_CLIENT_NODE: [string, string, string][] = [
  [
    "a token and CA data",
    `{server: "https://k.invalid:6443", certificate-authority-data: ${b64("CA DATA")}}`,
    "{token: s3cret}",
  ],
  [
    "a CA file relative to the kubeconfig",
    "{server: https://k.invalid:6443/, certificate-authority: ca.pem}",
    "{token: s3cret}",
  ],
  [
    "client certificate data, TLS verification off",
    "{server: https://k.invalid, insecure-skip-tls-verify: true}",
    `{client-certificate-data: ${b64("CERT DATA")}, client-key-data: ${b64("KEY DATA")}}`,
  ],
  [
    "client certificate files and a TLS server name",
    "{server: https://10.0.0.1, tls-server-name: kubernetes.default, certificate-authority: ca.pem}",
    "{client-certificate: cert.pem, client-key: key.pem}",
  ],
  ["no credentials at all", "{server: https://k.invalid}", "{}"],
  ["a token to a plain http:// server", "{server: http://127.0.0.1:8001}", "{token: s3cret}"],
  [
    "empty fields of kinds it leaves to client-node",
    "{server: https://k.invalid, proxy-url: ''}",
    "{token: s3cret, exec: null, as: ''}",
  ],
];

describe("simpleCredentials against client-node", () => {
  it.each(SAME_AS_CLIENT_NODE)("sends what client-node sends for %s", async (_, cluster, user) => {
    const file = kubeconfig(cluster, user);
    const simple = await simpleCredentials(file, {});
    expect(simple).toBeDefined();
    const ours = await wire(await simpleConnection(simple!, {}));
    const theirs = await wire(await clientNodeConnection(file, {}));
    // Plain http: client-node must be told not to verify TLS there is none of.
    if (ours.server.startsWith("http:")) theirs.rejectUnauthorized = undefined;
    expect(ours).toEqual(theirs);
    expect(ours.server).toMatch(/^https?:\/\/[^/]+$/);
  });

  it.each([
    ["JSON", (c: object) => JSON.stringify(c, null, 2)],
    [
      "a YAML flow mapping that is not JSON",
      (c: object) => JSON.stringify(c).replaceAll('"current-context":"x"', "current-context: x"),
    ],
  ])("reads a kubeconfig written as %s as client-node does", async (_, write) => {
    const file = join(dir(), "config");
    writeFileSync(
      file,
      write({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "x",
        clusters: [
          { name: "c", cluster: { server: "https://k.invalid:6443", "certificate-authority-data": b64("CA DATA") } },
        ],
        users: [{ name: "u", user: { token: "s3cret" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      }),
    );
    const ours = await wire(await simpleConnection((await simpleCredentials(file, {}))!, {}));
    expect(ours).toMatchObject({ server: "https://k.invalid:6443", ca: "CA DATA", authorization: "Bearer s3cret" });
    expect(ours).toEqual(await wire(await clientNodeConnection(file, {})));
  });

  it("loads the YAML parser for a YAML kubeconfig only, not for a JSON one", async () => {
    let loads = 0;
    vi.doMock("yaml", async (original) => {
      loads++;
      return original();
    });
    try {
      const json = join(dir(), "config");
      writeFileSync(
        json,
        JSON.stringify({
          "current-context": "x",
          clusters: [{ name: "c", cluster: { server: "https://k.invalid" } }],
          users: [{ name: "u", user: { token: "t" } }],
          contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        }),
      );
      expect(await simpleCredentials(json, {})).toMatchObject({ server: "https://k.invalid" });
      // JSON as kubectl config view writes it, after a blank line and indentation.
      writeFileSync(json, `\n  ${readFileSync(json, "utf8")}`);
      expect(await simpleCredentials(json, {})).toMatchObject({ server: "https://k.invalid" });
      expect(loads).toBe(0);
      expect(await simpleCredentials(kubeconfig("{server: https://k.invalid}", "{token: t}"), {})).toMatchObject({
        server: "https://k.invalid",
      });
      expect(loads).toBe(1);
    } finally {
      vi.doUnmock("yaml");
    }
  });

  // client-node reads only its own `token-file` (once); kubectl's `tokenFile` it ignores.
  it("reads kubectl's tokenFile, relative to the kubeconfig, again for every request", async () => {
    const file = kubeconfig("{server: https://k.invalid}", "{tokenFile: token}");
    const conn = await simpleConnection((await simpleCredentials(file, {}))!, {});
    expect((await wire(conn)).authorization).toBe("Bearer token-from-file");
    writeFileSync(join(file, "..", "token"), "rotated");
    expect((await wire(conn)).authorization).toBe("Bearer rotated");
  });
});

describe("simpleCredentials leaves to client-node", () => {
  const cases: [string, string, string | undefined, string?][] = [
    [
      "an exec plugin",
      "{server: https://k.invalid}",
      "{exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}",
    ],
    ["an auth provider", "{server: https://k.invalid}", "{auth-provider: {name: oidc}}"],
    ["basic auth", "{server: https://k.invalid}", "{username: a, password: b}"],
    ["impersonation", "{server: https://k.invalid}", "{token: t, as: someone}"],
    ["a proxy-url", "{server: https://k.invalid, proxy-url: http://127.0.0.1:3128}", "{token: t}"],
    ["a context whose user is missing", "{server: https://k.invalid}", undefined],
    ["client-node's own token-file", "{server: https://k.invalid}", "{token-file: /dev/null}"],
  ];
  it.each(cases)("a kubeconfig with %s", async (_, cluster, user) => {
    expect(await simpleCredentials(kubeconfig(cluster, user), {})).toBeUndefined();
  });

  it.each([
    ["contexts that are not a list", { contexts: { x: { cluster: "c", user: "u" } } }],
    ["clusters that are not a list", { clusters: { c: { server: "https://k.invalid" } } }],
    [
      "a context naming its cluster by a number",
      {
        clusters: [{ name: 5, cluster: { server: "https://k.invalid" } }],
        contexts: [{ name: "x", context: { cluster: 5, user: "u" } }],
      },
    ],
    ["a user that is not a mapping", { users: [{ name: "u", user: 5 }] }],
    ["a cluster that is not a mapping", { clusters: [{ name: "c", cluster: "https://k.invalid" }] }],
  ])("a kubeconfig with %s, without failing", async (_, changed) => {
    const config = {
      "current-context": "x",
      clusters: [{ name: "c", cluster: { server: "https://k.invalid" } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    };
    const file = join(dir(), "config");
    writeFileSync(file, JSON.stringify(config));
    expect(await simpleCredentials(file, {})).toMatchObject({ server: "https://k.invalid" });
    writeFileSync(file, JSON.stringify({ ...config, ...changed }));
    expect(await simpleCredentials(file, {})).toBeUndefined();
  });

  it("a kubeconfig with no current context", async () => {
    const file = kubeconfig("{server: https://k.invalid}", "{}");
    writeFileSync(file, "apiVersion: v1\nkind: Config\nclusters: []\n");
    expect(await simpleCredentials(file, {})).toBeUndefined();
  });

  it("KUBECONFIG naming several files to merge", async () => {
    const one = kubeconfig("{server: https://k.invalid}", "{}");
    expect(await simpleCredentials(undefined, { KUBECONFIG: one })).toMatchObject({ server: "https://k.invalid" });
    expect(await simpleCredentials(undefined, { KUBECONFIG: `${one}:${one}` })).toBeUndefined();
  });
});

describe("simpleCredentials in a pod", () => {
  function serviceAccount(token: string): string {
    const sa = dir();
    writeFileSync(join(sa, "token"), token);
    writeFileSync(join(sa, "ca.crt"), "CLUSTER CA");
    return sa;
  }
  const noHome = () => dir();
  const pod = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

  it("uses the ServiceAccount's token and the cluster CA, reading the token again on every request", async () => {
    const sa = serviceAccount("sa-token\n");
    const conn = await simpleConnection((await simpleCredentials(undefined, pod, noHome(), sa))!, {});
    expect(await wire(conn)).toEqual({
      server: "https://10.96.0.1:443",
      ca: "CLUSTER CA",
      authorization: "Bearer sa-token",
    });
    writeFileSync(join(sa, "token"), "rotated");
    expect((await wire(conn)).authorization).toBe("Bearer rotated");
  });

  it("forms the server address as client-node does: brackets around IPv6, http on the plain ports", async () => {
    const sa = serviceAccount("t");
    expect(
      (
        await simpleCredentials(
          undefined,
          { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
          noHome(),
          sa,
        )
      )?.server,
    ).toBe("https://[fd00::1]:443");
    for (const port of ["80", "8080", "8001"]) {
      expect(
        (
          await simpleCredentials(
            undefined,
            { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: port },
            noHome(),
            sa,
          )
        )?.server,
      ).toBe(`http://10.0.0.1:${port}`);
    }
    expect(
      (
        await simpleCredentials(
          undefined,
          { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "6443" },
          noHome(),
          sa,
        )
      )?.server,
    ).toBe("https://10.0.0.1:6443");
  });

  it("prefers KUBECONFIG and then ~/.kube/config, as client-node does", async () => {
    const sa = serviceAccount("t");
    const fromEnv = kubeconfig("{server: https://from-env.invalid}", "{}");
    expect((await simpleCredentials(undefined, { ...pod, KUBECONFIG: fromEnv }, noHome(), sa))?.server).toBe(
      "https://from-env.invalid",
    );
    const home = dir();
    mkdirSync(join(home, ".kube"));
    writeFileSync(
      join(home, ".kube", "config"),
      `clusters: [{name: c, cluster: {server: "https://from-home.invalid"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    expect((await simpleCredentials(undefined, pod, home, sa))?.server).toBe("https://from-home.invalid");
    expect((await simpleCredentials(undefined, pod, noHome(), sa))?.server).toBe("https://10.96.0.1:443");
  });

  it("is not in a pod without the service address or the token", async () => {
    const sa = serviceAccount("t");
    expect(await simpleCredentials(undefined, { KUBERNETES_SERVICE_HOST: "10.96.0.1" }, noHome(), sa)).toBeUndefined();
    expect(await simpleCredentials(undefined, pod, noHome(), dir())).toBeUndefined();
  });
});
