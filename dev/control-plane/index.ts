/**
 * A real Kubernetes control plane on loopback, for the tests and for local runs.
 *
 * Profile `api`: etcd and a secure kube-apiserver with RBAC authorization.
 * Profile `full`: also kube-controller-manager (Deployments, ReplicaSets, EndpointSlices, garbage
 * collection), kube-scheduler and kwok with one fake node, so Relay pods actually become Ready.
 * Profile `node`: `full` with a real node (dev/node/: kubelet, containerd, runc, kube-proxy, and
 * CoreDNS as a pod) beside kwok's (tainted), and Knative Serving (Traefik its ingress) and Eventing
 * as pods; the API server then listens on the host's end of the node's link instead of loopback,
 * so that pods reach it.
 *
 * Every port is free-picked on 127.0.0.1; every process runs in its own group and is killed on
 * stop, on process exit, and by a watchdog if the owner dies without stopping.
 */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { KubeClient, connect, type KubeObject } from "../../shared/kube/client.ts";
import { NODE_NAME } from "../node/config.ts";
import { coreDnsObjects } from "../node/dns.ts";
import { claimSlot, cleanupScript, startNode } from "../node/index.ts";
import { installKnative } from "../node/install-knative.ts";
import { ensureBinaries, ensureImages, ensureKnative, ensureNode, type KnativeAssets } from "./binaries.ts";
import { crdsToInstall } from "./crds.ts";
import { freePort } from "./ports.ts";
import { alive, killGroupsNow, startComponent, startWatchdog, stopGroups, tail, type Component } from "./processes.ts";

export type Profile = "api" | "full" | "node";
export const FAKE_NODE = "kwok-node-0";
const FIELD_MANAGER = "dynamo-pool-relay/control-plane";

export interface ControlPlaneInfo {
  profile: Profile;
  dir: string;
  etcdData: string;
  kubeconfig: string;
  server: string;
  pids: number[];
}

/** Stops a control plane from its recorded info, also from another process (`poolrelay cluster down`). POOLRELAY_KEEP_LOGS=1 keeps its folder (every process's log) for a post-mortem. */
export async function stopControlPlane(info: Pick<ControlPlaneInfo, "pids" | "dir" | "etcdData">): Promise<void> {
  await stopGroups(info.pids);
  runCleanup(info.dir);
  rmSync(info.etcdData, { recursive: true, force: true });
  if (process.env["POOLRELAY_KEEP_LOGS"] === "1") {
    rmSync(`${info.dir}/tokens.csv`, { force: true });
    process.stderr.write(`control plane logs kept in ${info.dir}\n`);
  } else {
    rmSync(info.dir, { recursive: true, force: true });
  }
}

/** What the processes leave on the host (a node's link and cgroups), once they are gone: DIR/cleanup.sh, when there is one. */
function runCleanup(dir: string): void {
  if (!existsSync(`${dir}/cleanup.sh`)) return;
  const r = spawnSync("bash", [`${dir}/cleanup.sh`], { encoding: "utf8" });
  if (r.status !== 0) process.stderr.write(`cleaning up after the node failed: ${r.stderr.trim()}\n`);
}

export interface ControlPlane extends ControlPlaneInfo {
  client: KubeClient;
  stop(): Promise<void>;
}

export interface StartOptions {
  profile: Profile;
  /** Kill everything when this process exits or dies; omit for a control plane that outlives its starter. */
  ownerPid?: number;
  log?: (line: string) => void;
  timeoutMs?: number;
}

async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => T | undefined | Promise<T | undefined>,
  check: () => void,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    check();
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

function writeKubeconfig(path: string, server: string, ca: string, token: string): void {
  writeFileSync(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "poolrelay-local", cluster: { server, "certificate-authority": ca } }],
      users: [{ name: "admin", user: { token } }],
      contexts: [
        { name: "poolrelay-local", context: { cluster: "poolrelay-local", user: "admin", namespace: "default" } },
      ],
      "current-context": "poolrelay-local",
    }),
    { mode: 0o600 },
  );
}

const FAKE_NODE_TAINT = { key: "kwok.x-k8s.io/node", value: "fake", effect: "NoSchedule" };
/** A DynamoPoolRelay's spec fields that put its Relay pods on kwok's nodes, beside a real node. */
export const FAKE_NODE_PLACEMENT = {
  nodeSelector: { type: "kwok" },
  tolerations: [{ key: FAKE_NODE_TAINT.key, operator: "Exists", effect: FAKE_NODE_TAINT.effect }],
};

/** A node kwok runs (the control plane has one; a benchmark adds more for more Relay pods). */
export function fakeNode(name = FAKE_NODE, tainted = false): KubeObject {
  const resources = { cpu: "64", memory: "256Gi", pods: "220" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
      },
    },
    spec: tainted ? { taints: [FAKE_NODE_TAINT] } : {},
    status: { allocatable: resources, capacity: resources },
  };
}

/** Ports are picked free but bound later by other processes; a start that loses that race is retried, as envtest does. */
const START_ATTEMPTS = 3;

export async function startControlPlane(options: StartOptions): Promise<ControlPlane> {
  const bin = ensureBinaries();
  const knative = options.profile === "node" ? ensureKnative() : undefined;
  const nodeAssets = options.profile === "node" ? ensureNode() : undefined;
  const node = nodeAssets ? { bin: nodeAssets, images: ensureImages(nodeAssets, knative?.bin) } : undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, bin, knative, node);
    } catch (err) {
      if (attempt >= START_ATTEMPTS) throw err;
      options.log?.(
        `start failed (${(err as Error).message.split("\n")[0]}); retrying (${attempt + 1} of ${START_ATTEMPTS})`,
      );
    }
  }
}

async function startOnce(
  options: StartOptions,
  bin: ReturnType<typeof ensureBinaries>,
  knative: KnativeAssets | undefined,
  node: { bin: string; images: string } | undefined,
): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "poolrelay-cp-"));
  // etcd on tmpfs when there is one: fsync-free and fast.
  const etcdData = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/poolrelay-etcd-") : join(dir, "etcd");
  const pidsFile = join(dir, "pids");
  const components: Component[] = [];
  const pids = () => components.map((c) => c.pid);
  const record = (c: Component) => {
    components.push(c);
    writeFileSync(pidsFile, pids().join("\n"));
    return c;
  };
  const owned = options.ownerPid !== undefined;
  const onExit = () => {
    killGroupsNow(pids());
    runCleanup(dir);
    rmSync(etcdData, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  if (owned) process.on("exit", onExit);
  const watchdog = owned ? [startWatchdog(options.ownerPid!, pidsFile, dir, [dir, etcdData])] : [];

  const stop = async () => {
    // The exit hook stays until the groups are gone: an exit mid-stop (a second Ctrl-C) still kills them.
    await stopControlPlane({ pids: [...pids(), ...watchdog], dir, etcdData });
    process.off("exit", onExit);
  };
  const failIfDead = () => {
    for (const c of components) {
      if (c.child.exitCode !== null || !alive(c.pid))
        throw new Error(`${c.name} exited (code ${c.child.exitCode}); last log lines:\n${tail(c.log)}`);
    }
  };

  try {
    // The node's link is claimed first: the API server listens on its host end.
    const plan = node ? claimSlot() : undefined;
    if (plan) writeFileSync(join(dir, "cleanup.sh"), `${cleanupScript(plan)}\n`);
    const address = plan?.hostIP ?? "127.0.0.1";
    // 1. etcd
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    record(
      startComponent(
        "etcd",
        bin.etcd,
        [
          `--data-dir=${etcdData}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
          "--unsafe-no-fsync=true",
          "--log-level=warn",
        ],
        dir,
      ),
    );
    await until(
      "etcd /health",
      timeoutMs,
      async () => ((await fetch(`${etcdUrl}/health`)).ok ? true : undefined),
      failIfDead,
    );
    log(`etcd ready on ${etcdUrl} (${Date.now() - started} ms)`);

    // 2. kube-apiserver: a static admin token in system:masters, a self-signed serving cert, RBAC on.
    const certDir = join(dir, "certs");
    mkdirSync(certDir);
    const token = randomBytes(24).toString("hex");
    writeFileSync(join(dir, "tokens.csv"), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const saKey = join(dir, "sa.key");
    writeFileSync(saKey, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const server = `https://${address}:${apiPort}`;
    // A real node's kubelet and kube-proxy each have an identity of their own, as on any cluster.
    const nodeToken = randomBytes(24).toString("hex");
    const proxyToken = randomBytes(24).toString("hex");
    if (plan) {
      appendFileSync(
        join(dir, "tokens.csv"),
        `${nodeToken},system:node:${NODE_NAME},system:node:${NODE_NAME},"system:nodes"\n${proxyToken},system:kube-proxy,system:kube-proxy\n`,
      );
    }
    record(
      startComponent(
        "kube-apiserver",
        bin["kube-apiserver"],
        [
          `--etcd-servers=${etcdUrl}`,
          `--secure-port=${apiPort}`,
          `--bind-address=${address}`,
          `--advertise-address=${address}`,
          `--cert-dir=${certDir}`,
          `--token-auth-file=${join(dir, "tokens.csv")}`,
          `--service-account-issuer=${server}/`,
          `--service-account-key-file=${saKey}`,
          `--service-account-signing-key-file=${saKey}`,
          "--allow-privileged=true",
          ...(plan
            ? [
                // As a real cluster: kubelets authorized as nodes, pods given their ServiceAccount's token,
                // the `kubernetes` Service's endpoint kept at this address.
                "--authorization-mode=Node,RBAC",
                `--service-cluster-ip-range=${plan.serviceCIDR}`,
                "--enable-admission-plugins=OwnerReferencesPermissionEnforcement,NodeRestriction",
                "--kubelet-preferred-address-types=InternalIP",
              ]
            : [
                "--authorization-mode=RBAC",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--disable-admission-plugins=ServiceAccount",
                // On by default on OpenShift: an ownerReference with blockOwnerDeletion needs update on the owner's finalizers.
                "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
                "--endpoint-reconciler-type=none",
              ]),
        ],
        dir,
      ),
    );
    const kubeconfig = join(dir, "kubeconfig");
    const ca = join(certDir, "apiserver.crt");
    await until(
      "the kube-apiserver's serving certificate",
      timeoutMs,
      () => (existsSync(ca) ? true : undefined),
      failIfDead,
    );
    writeKubeconfig(kubeconfig, server, ca, token);
    const client = new KubeClient(await connect(kubeconfig));
    await until(
      "kube-apiserver /readyz",
      timeoutMs,
      async () => ((await client.request("GET", "/readyz")) === "ok" ? true : undefined),
      failIfDead,
    );
    log(`kube-apiserver ready on ${server} (${Date.now() - started} ms)`);

    // 3. CRDs
    // The node profile installs Knative as Knative ships it, CRDs included (dev/node/knative.ts).
    const crds = crdsToInstall();
    for (const crd of crds) await client.apply(crd, FIELD_MANAGER, { force: true });
    for (const crd of crds) {
      await until(
        `CRD ${crd.metadata.name} Established`,
        timeoutMs,
        async () => {
          const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>({
            apiVersion: crd.apiVersion,
            kind: crd.kind,
            name: crd.metadata.name,
          });
          return got?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
            ? true
            : undefined;
        },
        failIfDead,
      );
    }
    log(`${crds.length} CRDs established (${Date.now() - started} ms)`);

    // 4. full profile: controllers, scheduler, kwok and its node
    if (options.profile !== "api") {
      record(
        startComponent(
          "kube-controller-manager",
          bin["kube-controller-manager"],
          [
            `--kubeconfig=${kubeconfig}`,
            "--leader-elect=false",
            "--secure-port=0",
            `--service-account-private-key-file=${saKey}`,
            "--kube-api-qps=200",
            "--kube-api-burst=400",
            "--concurrent-deployment-syncs=10",
            "--concurrent-replicaset-syncs=10",
            "--concurrent-gc-syncs=20",
            "--node-monitor-grace-period=60s",
            `--root-ca-file=${ca}`,
          ],
          dir,
        ),
      );
      record(
        startComponent(
          "kube-scheduler",
          bin["kube-scheduler"],
          [`--kubeconfig=${kubeconfig}`, "--leader-elect=false", "--secure-port=0"],
          dir,
        ),
      );
      const nodeReady = (name: string) =>
        until(
          `node ${name} Ready`,
          timeoutMs,
          async () => {
            const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>({
              apiVersion: "v1",
              kind: "Node",
              name,
            });
            return got?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? true : undefined;
          },
          failIfDead,
        );
      if (plan && node) {
        const kubeletKubeconfig = join(dir, "kubelet.kubeconfig");
        const kubeProxyKubeconfig = join(dir, "kube-proxy.kubeconfig");
        writeKubeconfig(kubeletKubeconfig, server, ca, nodeToken);
        writeKubeconfig(kubeProxyKubeconfig, server, ca, proxyToken);
        startNode({ plan, dir, bin: node.bin, images: node.images, kubeletKubeconfig, kubeProxyKubeconfig, record });
        await nodeReady(NODE_NAME);
        for (const obj of coreDnsObjects(plan)) await client.apply(obj, FIELD_MANAGER, { force: true });
        log(`node ${NODE_NAME} Ready (${Date.now() - started} ms)`);
        if (knative) {
          await installKnative(client, knative.config, (what, probe) => until(what, timeoutMs, probe, failIfDead));
          log(`Knative Serving, Knative Eventing and Traefik Available (${Date.now() - started} ms)`);
        }
      }
      // kwok's fake node holds Relay pods by the hundred, with no process in them (the scale
      // benchmarks' and the integration suite's). Beside a real node it is tainted: only a pod that
      // asks for it (FAKE_NODE_PLACEMENT) goes there.
      const kwokPort = await freePort();
      record(
        startComponent(
          "kwok",
          bin.kwok,
          [
            `--kubeconfig=${kubeconfig}`,
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--cidr=10.244.0.0/16",
            "--node-ip=127.0.0.1",
            `--server-address=127.0.0.1:${kwokPort}`,
            `--config=${bin.kwokStages}`,
          ],
          dir,
        ),
      );
      await client.apply(fakeNode(FAKE_NODE, plan !== undefined), FIELD_MANAGER, { force: true });
      await nodeReady(FAKE_NODE);
      // The service-account controller creating `default` shows the controller manager is working.
      await until(
        "the controller manager",
        timeoutMs,
        async () =>
          (await client.get({ apiVersion: "v1", kind: "ServiceAccount", namespace: "default", name: "default" }))
            ? true
            : undefined,
        failIfDead,
      );
      log(`controller-manager, scheduler and ${plan ? "the node" : "kwok"} ready (${Date.now() - started} ms)`);
    }
    return { profile: options.profile, dir, etcdData, kubeconfig, server, pids: pids(), client, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
