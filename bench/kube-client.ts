// The Kubernetes client's transport and credential loading, measured against the libraries that
// would replace them (docs/kube-client.md): for each variant of bench/experiments/kube-variants.ts
// (ours; undici with allowH2 as the transport; client-node's KubeConfig as the loader; both), on a
// real kube-apiserver (profile api):
//
//   1. cold start of the apply function bundled with that variant, as bench/cold-start.ts measures
//      the product's (spawn to listening, the first event, a resync reading every child, to its
//      answer), the bundle's size, and the TCP connections the process opened;
//   2. a reconcile sequence in a fresh process (./experiments/kube-sequence.ts): the first reconcile
//      of a new pair (creates its children) and then resyncs (read every child, write nothing):
//      requests, connections, latency;
//   3. faults: the same shell run through the fault suite's API proxy (test/faults/fault-proxy.ts)
//      at the fault suite's rates, with an outage of each kind; every invocation must end with an
//      answer within its deadline, and the pair converge once the faults stop.
//
//   node bench/kube-client.ts        (BENCH_RUNS, default 7; FAULT_RUNS, default 3)
// Prints Markdown tables. Numbers are measurements of this machine, never assertions.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import net from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile, type Plugin } from "esbuild";
import { parse } from "yaml";
import { startControlPlane } from "../dev/control-plane/index.ts";
import { EventType, productEvent } from "../shared/events.ts";
import { coldStart, type ColdStart } from "./cold-start.ts";
import { dgd, dpr } from "./pipeline-support.ts";
import { FaultProxy, type FaultRates } from "../test/faults/fault-proxy.ts";
import { VARIANTS, type Variant } from "./experiments/kube-connect.ts";
import type { Invocation } from "./experiments/kube-sequence.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 7);
const FAULT_RUNS = Number(process.env["FAULT_RUNS"] ?? 3);
const WARM = 5;
const FAULTED = Number(process.env["FAULT_INVOCATIONS"] ?? 30);
/** The fault suite's rates (test/faults/faults.test.ts). */
const RATES: FaultRates = {
  latency: 0.15,
  throttle: 0.03,
  error500: 0.02,
  error503: 0.02,
  resetBefore: 0.02,
  resetMidBody: 0.02,
  lostAnswer: 0.08,
  hang: 0.004,
};
const MANAGER = "dynamo-pool-relay/bench-kube-client";
const NS = "kube-client";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[], digits = 0) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const log = (line: string) => process.stderr.write(`[kube-client] ${line}\n`);

// ---- 1. Bundles: the product's build (scripts/bundle.ts's options), shared/kube/client.ts resolved to the variant's.
const out = `${root}dist/bench/kube-client`;
rmSync(out, { recursive: true, force: true });
const banner = { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" };
const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node22",
  minify: true,
  metafile: true,
  banner,
  logLevel: "warning",
} as const;
const FRAMEWORK = "@google-cloud/functions-framework";
const shared = (path: string): Plugin => ({
  name: "shared framework",
  setup: (b) =>
    b.onResolve({ filter: /^@google-cloud\/functions-framework(\/testing)?$/ }, () => ({ path, external: true })),
});
const variantFile = (v: Variant) => `${root}bench/experiments/kube-client-${v}.ts`;
const kubeClientOf = (v: Variant): Plugin => ({
  name: "kube client variant",
  setup: (b) =>
    b.onResolve({ filter: /kube\/client\.ts$/ }, (a) =>
      v === "ours" || a.importer.includes("/bench/experiments/") ? undefined : { path: variantFile(v) },
    ),
});

interface Sizes {
  /** The bundle's files that a start loads (the entry and its static imports). */
  startKiB: number;
  /** And those its first event loads too: the variant's connect (undici, client-node's config module). */
  eventKiB: number;
  /** All of the apply bundle's files (the product's lazy fallbacks too). */
  allKiB: number;
}

/** What the variant's connect imports when the first event (or the preconnect) needs it. */
const LAZY = /bench\/experiments\/kube-(undici|client-node)\.ts$/;

function sizes(meta: Metafile, dir: string): Sizes {
  const outputs = Object.entries(meta.outputs).filter(([f]) => f.endsWith(".mjs"));
  const byName = new Map(outputs.map(([f, o]) => [join(root, f), o]));
  const seen = new Set<string>();
  const visit = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const i of byName.get(f)?.imports ?? [])
      if (i.kind === "import-statement" && !i.external) visit(join(root, i.path));
  };
  const kib = (fs: Iterable<string>) => [...fs].reduce((n, f) => n + (byName.get(f)?.bytes ?? 0), 0) / 1024;
  visit(join(dir, "index.mjs"));
  const startKiB = kib(seen);
  for (const [f, o] of byName) if (o.entryPoint && LAZY.test(o.entryPoint)) visit(f);
  return { startKiB, eventKiB: kib(seen), allKiB: kib(byName.keys()) };
}

async function bundleVariant(v: Variant): Promise<Sizes> {
  const dir = `${out}/${v}`;
  mkdirSync(dir, { recursive: true });
  await build({
    ...common,
    stdin: {
      contents: `export { http, cloudEvent } from "${FRAMEWORK}"; export { getFunction, getTestServer } from "${FRAMEWORK}/testing";`,
      resolveDir: root,
      loader: "js",
      sourcefile: "framework.js",
    },
    outfile: `${dir}/framework.mjs`,
  });
  const fn = await build({
    ...common,
    entryPoints: [`${root}functions/apply/index.ts`],
    outdir: `${dir}/apply`,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    plugins: [shared("../framework.mjs"), kubeClientOf(v)],
  });
  await build({
    ...common,
    entryPoints: [`${root}functions/runtime/main.ts`],
    outfile: `${dir}/main.mjs`,
    plugins: [shared("./framework.mjs")],
  });
  await build({
    ...common,
    entryPoints: [`${root}functions/runtime/fill-compile-cache.ts`],
    outfile: `${dir}/fill-compile-cache.mjs`,
  });
  const { NODE_COMPILE_CACHE: _own, NODE_DISABLE_COMPILE_CACHE: _off, ...env } = process.env;
  await run(process.execPath, [`${dir}/fill-compile-cache.mjs`], env);
  return sizes(fn.metafile, `${dir}/apply`);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.once("exit", (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${args.join(" ")} exited ${code}`)),
    );
  });
}

/** A TCP pass-through in front of the API server that counts the connections made to it. */
async function countingForwarder(
  host: string,
  port: number,
): Promise<{ port: number; connections: () => number; close: () => void }> {
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const up = net.connect(port, host);
    client.pipe(up).pipe(client);
    up.on("error", () => client.destroy());
    client.on("error", () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () => server.close(),
  };
}

/** NO_PROXY cases of in-cluster and kubeconfig API servers, and whether each reading sends the request through the proxy. */
async function proxyReadings(): Promise<{ server: string; noProxy: string; ours: string; undici: string }[]> {
  const { EnvHttpProxyAgent } = await import("undici");
  const { proxyFromEnv } = await import("../shared/kube/proxy-env.ts");
  const seen: string[] = [];
  const proxy = net.createServer(
    (s) => (
      s.once("data", (d: Buffer) => seen.push(d.toString("utf8").split(" ")[1]!)),
      s.on("error", () => undefined)
    ),
  );
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  const cases: [string, string][] = [
    ["https://10.96.0.1:443", "10.96.0.0/12"],
    ["https://10.96.0.1:443", "10.96.0.1"],
    ["https://127.0.0.1:6443", ""],
    ["https://api.cluster.local:6443", ".cluster.local"],
    ["https://api.cluster.local:6443", "cluster.local:443"],
    ["https://[fd00::1]:443", "fd00::/8"],
  ];
  const rows = [];
  for (const [server, noProxy] of cases) {
    const ours = proxyFromEnv(new URL(server), { HTTPS_PROXY: proxyUrl, NO_PROXY: noProxy }) ? "proxy" : "direct";
    seen.length = 0;
    const agent = new EnvHttpProxyAgent({ httpsProxy: proxyUrl, noProxy });
    await agent
      .request({ origin: server, path: "/version", method: "GET", signal: AbortSignal.timeout(300) })
      .catch(() => undefined);
    await agent.destroy().catch(() => undefined);
    rows.push({ server, noProxy, ours, undici: seen.length ? "proxy" : "direct" });
  }
  proxy.close();
  return rows;
}

const sizesByVariant = new Map<Variant, Sizes>();
for (const v of VARIANTS) sizesByVariant.set(v, await bundleVariant(v));
log(`bundled ${VARIANTS.join(", ")}`);

const cp = await startControlPlane({ profile: "api", ownerPid: process.pid, timeoutMs: 180_000 });
try {
  const admin = cp.client;
  const api = new URL(cp.server);
  const adminConfig = parse(readFileSync(cp.kubeconfig, "utf8")) as {
    clusters: { cluster: { "certificate-authority": string } }[];
    users: { user: { token: string } }[];
  };
  const ca = adminConfig.clusters[0]!.cluster["certificate-authority"];
  /** A JSON kubeconfig (no YAML parser in our loader, as a pod's mounted token) with the admin token, to `server`. */
  const kubeconfig = (name: string, server: string) => {
    const file = join(cp.dir, `${name}.kubeconfig`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "c",
        clusters: [{ name: "c", cluster: { server, "certificate-authority": ca } }],
        users: [{ name: "u", user: { token: adminConfig.users[0]!.user.token } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      }),
      { mode: 0o600 },
    );
    return file;
  };
  const forwarder = await countingForwarder(api.hostname, Number(api.port));
  const direct = kubeconfig("direct", `https://${api.hostname}:${forwarder.port}`);
  await admin.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }, MANAGER);
  const pair = async (name: string) => {
    await admin.apply(dpr(NS, name), MANAGER);
    await admin.apply(dgd(NS, name), MANAGER);
  };
  const sequence = async (v: Variant, config: string, name: string, warm: number, deadline?: string) =>
    JSON.parse(
      await run(process.execPath, [
        `${root}bench/experiments/kube-sequence.ts`,
        v,
        config,
        NS,
        name,
        String(warm),
        ...(deadline ? [deadline] : []),
      ]),
    ) as { invocations: Invocation[]; totalMs: number; unhandled: number };

  // ---- 1. Cold start, round-robin over the variants; a converged pair, whose resync reads every child.
  await pair("cold");
  await sequence("ours", direct, "cold", 0);
  const resync = productEvent(
    EventType.Reconcile,
    { namespace: NS, name: "cold", cause: "Resync" },
    { source: "/bench", cause: "c", time: now() },
  );
  const limitNotes = new Set<string>();
  const cold = new Map<Variant, (ColdStart & { connections: number })[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const v of VARIANTS) {
      const before = forwarder.connections();
      const r = await coldStart(
        "apply",
        `${out}/${v}/main.mjs`,
        `${out}/${v}/apply/index.mjs`,
        resync,
        direct,
        limitNotes,
      );
      cold.get(v)!.push({ ...r, connections: forwarder.connections() - before });
    }
  }
  log("cold starts done");

  // ---- 2. A reconcile sequence in a fresh process: a new pair's first reconcile, then resyncs.
  const seq = new Map<Variant, { invocations: Invocation[]; connections: number }[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const v of VARIANTS) {
      const name = `seq-${i}-${v.replace("+", "-")}`;
      await pair(name);
      const before = forwarder.connections();
      const r = await sequence(v, direct, name, WARM);
      seq.get(v)!.push({ invocations: r.invocations, connections: forwarder.connections() - before });
    }
  }
  log("sequences done");

  // ---- 3. Faults: the fault suite's proxy and rates, a seed per run (the same for every variant), an outage of each kind.
  const certs = join(cp.dir, "certs");
  const cert = readFileSync(join(certs, "apiserver.crt"));
  const key = readFileSync(join(certs, "apiserver.key"));
  interface FaultRun {
    invocations: Invocation[];
    unhandled: number;
    converged: boolean;
    counts: Record<string, number>;
  }
  const faults = new Map<Variant, FaultRun[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < FAULT_RUNS; i++) {
    for (const v of VARIANTS) {
      const proxy = new FaultProxy({ upstream: cp.server, ca: cert, cert, key, seed: 20261201 + i, hangMs: 30_000 });
      const through = kubeconfig(`faults-${v}`, await proxy.listen(api.hostname));
      const name = `faults-${i}-${v.replace("+", "-")}`;
      await pair(name);
      proxy.rates = RATES;
      // Two outages, by the proxy's request count: 10 requests answered 503, then 10 whose connections are reset.
      const handle = (proxy as unknown as { handle: (...a: unknown[]) => void }).handle.bind(proxy);
      (proxy as unknown as { handle: (...a: unknown[]) => void }).handle = (...a: unknown[]) => {
        const n = proxy.counts.requests;
        proxy.outage = n >= 60 && n < 70 ? "unavailable" : n >= 120 && n < 130 ? "reset" : undefined;
        handle(...a);
      };
      const r = await sequence(v, through, name, FAULTED);
      const counts = { ...proxy.counts };
      await proxy.close();
      // Faults over: one reconcile converges the pair, and a resync after it finds nothing to write.
      const after = await sequence(v, direct, name, 1);
      const converged = after.invocations.every((x) => x.status < 300) && after.invocations[1]!.writes === 0;
      faults.get(v)!.push({ invocations: r.invocations, unhandled: r.unhandled + after.unhandled, converged, counts });
    }
  }
  forwarder.close();
  log("faults done");

  // ---- Tables.
  const limit = limitNotes.size
    ? `no memory limit: ${[...limitNotes].join("; ")}`
    : "under the apply Service's memory limit";
  console.log(
    `\nCold start of the apply function (resync of a converged pair: reads every child), ${RUNS} runs each, round-robin, median (range); Node ${process.version}; ${limit}\n`,
  );
  console.log(
    "| variant | spawn to listening, ms | first event, ms | in all, ms | TCP connections | HTTP status | bundle loaded at start / by the first event / in all, KiB |\n|---|---|---|---|---|---|---|",
  );
  for (const v of VARIANTS) {
    const rs = cold.get(v)!;
    const s = sizesByVariant.get(v)!;
    console.log(
      `| ${v} | ${spread(rs.map((r) => r.listenMs))} | ${spread(rs.map((r) => r.eventMs))} | ${spread(rs.map((r) => r.listenMs + r.eventMs))} | ${spread(rs.map((r) => r.connections))} | ${[...new Set(rs.map((r) => r.status))].join("/")} | ${s.startKiB.toFixed(0)} / ${s.eventKiB.toFixed(0)} / ${s.allKiB.toFixed(0)} |`,
    );
  }
  console.log(
    `\nA reconcile sequence in a fresh process: a new pair's first reconcile (creates its children), then ${WARM} resyncs (read every child, write nothing); ${RUNS} runs each, median (range)\n`,
  );
  console.log(
    "| variant | first: requests (reads/writes) | first, ms | resync: requests | resync, ms (median of all) | TCP connections in all | answers |\n|---|---|---|---|---|---|---|",
  );
  for (const v of VARIANTS) {
    const rs = seq.get(v)!;
    const first = rs.map((r) => r.invocations[0]!);
    const warm = rs.flatMap((r) => r.invocations.slice(1));
    const rw = (xs: Invocation[]) =>
      [...new Set(xs.map((x) => `${x.reads + x.writes} (${x.reads}/${x.writes})`))].join(", ");
    console.log(
      `| ${v} | ${rw(first)} | ${spread(first.map((x) => x.ms))} | ${rw(warm)} | ${spread(
        warm.map((x) => x.ms),
        1,
      )} | ${spread(rs.map((r) => r.connections))} | ${[...new Set(rs.flatMap((r) => r.invocations.map((x) => x.status)))].join("/")} |`,
    );
  }
  console.log(
    `\nFaults: the fault suite's proxy and rates (${Object.entries(RATES)
      .map(([k, r]) => `${k} ${r}`)
      .join(
        ", ",
      )}; a hang is held 30 s), an outage of 503s (the proxy's requests 61–70) and one of connection resets (121–130); ${1 + FAULTED} invocations per run in one process, ${FAULT_RUNS} runs each (seeds alike across variants); then the faults stop\n`,
  );
  console.log(
    "| variant | invocations | answered 2xx | answered 503 | other answers | deadline exceeded | longest, ms | unhandled errors | converged after | faults drawn (of requests) |\n|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const v of VARIANTS) {
    const rs = faults.get(v)!;
    const all = rs.flatMap((r) => r.invocations);
    const n = (f: (x: Invocation) => boolean) => all.filter(f).length;
    const drawn = rs.reduce(
      (a, r) =>
        a +
        Object.entries(r.counts)
          .filter(([k]) => k !== "requests")
          .reduce((s, [, c]) => s + c, 0),
      0,
    );
    const requests = rs.reduce((a, r) => a + (r.counts["requests"] ?? 0), 0);
    console.log(
      `| ${v} | ${all.length} | ${n((x) => x.status < 300)} | ${n((x) => x.status === 503)} | ${n((x) => x.status >= 300 && x.status !== 503)} | ${n((x) => !!x.deadlineExceeded)} | ${Math.round(Math.max(...all.map((x) => x.ms)))} | ${rs.reduce((a, r) => a + r.unhandled, 0)} | ${rs.filter((r) => r.converged).length}/${rs.length} | ${drawn} of ${requests} |`,
    );
  }
  const other = [...faults.values()]
    .flat()
    .flatMap((r) => r.invocations)
    .filter((x) => x.status >= 300 && x.status !== 503);
  if (other.length)
    console.log(`\nOther answers: ${[...new Set(other.map((x) => `${x.status} ${x.error}`))].join("; ")}`);
  for (const v of VARIANTS) {
    const errors = new Map<string, number>();
    for (const x of faults.get(v)!.flatMap((r) => r.invocations))
      if (x.error) {
        const k = x.error.replace(/\/namespaces\/[^ ]*/, "/…");
        errors.set(k, (errors.get(k) ?? 0) + 1);
      }
    console.log(
      `\n${v}, the errors answered: ${
        [...errors]
          .sort()
          .map(([k, c]) => `${c}× ${k}`)
          .join(" · ") || "none"
      }`,
    );
  }
  console.log(
    `\nWhich requests go through HTTPS_PROXY: our reading of NO_PROXY (shared/kube/proxy-env.ts, as Go's net/http) and undici's EnvHttpProxyAgent\n`,
  );
  console.log("| API server | NO_PROXY | ours | undici's EnvHttpProxyAgent |\n|---|---|---|---|");
  for (const row of await proxyReadings())
    console.log(`| ${row.server} | ${row.noProxy || "(unset)"} | ${row.ours} | ${row.undici} |`);
  console.log(
    `\nLoad average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  await cp.stop();
}
