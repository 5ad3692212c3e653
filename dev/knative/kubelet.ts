/**
 * A local kubelet for the pods that must really run: it watches Deployments and Knative Services
 * and runs, as a process on this host, each container whose image is a program it knows
 * (programs.ts): Knative's data plane and source adapters, and the product's functions. Every
 * other pod is left to kwok, which only pretends.
 *
 * A process gets what a pod would: the container's env (with the Downward API and ConfigMap/Secret
 * keys), a token of the pod's ServiceAccount from the TokenRequest API (so RBAC applies as in a
 * cluster), the proxy for cluster addresses, and its memory limit, in a memory cgroup where this
 * user may make one (bench/memory-cgroup.ts; the log's start line says which). It is restarted with
 * back-off when it exits and replaced when its spec changes. Its output goes to a log file; the
 * state of every process goes to workloads.json, for the launcher and the tests.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, openSync, renameSync, writeFileSync, closeSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../../shared/kube/client.ts";
import { ApiError } from "../../shared/kube/errors.ts";
import { collectionPath } from "../../shared/kube/resources.ts";
import { freePort } from "../control-plane/ports.ts";
import { portFree, portHolders } from "./port-holder.ts";
import { resolveEnv, type EnvVar } from "./pod-env.ts";
import { commandIn, memoryCgroup, memoryLimitBytes } from "../../bench/memory-cgroup.ts";
import { localPath, type Program } from "./programs.ts";
import { containerName, containerPortOf, selects, servingPort, servingStatus, workloadKey, workloadOf, type ContainerSpec, type Workload } from "./workload.ts";

export interface KubeletOptions {
  admin: KubeClient;
  /** The API server and its CA, for the ServiceAccount kubeconfigs. */
  server: string;
  caFile: string;
  /** The API server address a program's ServiceAccount kubeconfig names (`server` unless a test moves it). */
  serverFor?: (program: Program) => string;
  dir: string;
  proxyUrl: string;
  programFor: (image: string) => Program | undefined;
  log: (line: string) => void;
}

/** How an exit the kernel caused by the memory limit is reported, as the kubelet's container status does. */
const OOM_KILLED = "OOMKilled";

type State = "waiting" | "starting" | "running" | "crashed";

interface Instance {
  key: string;
  workload: Workload;
  container: ContainerSpec;
  containerName: string;
  program: Program;
  hash: string;
  state: State;
  reason?: string;
  /** How the container's memory limit applies to the current process, when it declares one. */
  memoryLimit?: string;
  /** Processes of this instance the kernel killed for going over that limit. */
  oomKills: number;
  child?: ChildProcess;
  /** Container port -> the local port it listens on. */
  ports: Map<number, number>;
  restarts: number;
  log: string;
  stopping: boolean;
  timer?: NodeJS.Timeout;
  /** When the current process started: a process that ran long enough starts its back-off over. */
  startedAt?: number;
  /** Run once when it turns running: the retirement of the instance it replaces. */
  onRunning: (() => void)[];
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

const BACKOFF_MS = [1000, 2000, 4000, 8000, 16000, 30000];
/** As the kubelet: a container that ran this long before exiting is restarted without back-off history. */
const BACKOFF_RESET_MS = 10 * 60_000;
/** How long a replaced process keeps running next to its ready replacement, as a rolling update overlaps pods. */
const OVERLAP_MS = 3000;
const READY_TIMEOUT_MS = 30_000;

export class LocalKubelet {
  private readonly workloads = new Map<string, Workload>();
  private readonly instances = new Map<string, Instance>();
  /** Replaced instances still running until their replacement is ready. */
  private readonly retiring = new Set<Instance>();
  private readonly queue = new Map<string, Promise<void>>();
  /** Status reports of each Knative Service, one at a time and in order. */
  private readonly reports = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private closed = false;
  private readonly o: KubeletOptions;

  constructor(options: KubeletOptions) {
    this.o = options;
    mkdirSync(join(options.dir, "workloads"), { recursive: true });
  }

  /** Watches until close(); resolves once both kinds have been listed (or their first list failed and is being retried). */
  async start(): Promise<void> {
    const ready = [
      this.watch("apps/v1", "Deployment"),
      this.watch("serving.knative.dev/v1", "Service"),
    ];
    await Promise.all(ready);
  }

  private watch(apiVersion: string, kind: string): Promise<void> {
    return new Promise((resolveListed) => {
      void (async () => {
        let resume: string | undefined;
        while (!this.abort.signal.aborted) {
          try {
            if (resume === undefined) {
              // A fresh list: forget what is gone, then follow the watch from the list's version.
              const seen = new Set<string>();
              const path = collectionPath(await this.o.admin.resource(apiVersion, kind), undefined);
              const list = (await this.o.admin.request("GET", path)) as { items: KubeObject[]; metadata: { resourceVersion: string } };
              resume = list.metadata.resourceVersion;
              for (const obj of list.items) {
                const w = workloadOf({ ...obj, apiVersion, kind });
                if (w) (seen.add(workloadKey(w)), this.observe(w));
              }
              for (const [key, w] of this.workloads) if (w.kind === (kind === "Deployment" ? "Deployment" : "KnativeService") && !seen.has(key)) this.forget(key);
            }
            resume = await this.o.admin.listAndWatch<KubeObject>(apiVersion, kind, undefined, (type, obj) => {
              const w = workloadOf(obj);
              if (!w) return;
              if (type === "DELETED") this.forget(workloadKey(w));
              else this.observe(w);
            }, this.abort.signal, resume, resolveListed);
          } catch (err) {
            if (err instanceof ApiError && err.status === 410) resume = undefined;
            else if (!this.abort.signal.aborted) this.o.log(`watch ${kind}: ${(err as Error).message}; retrying`);
            resolveListed();
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
      })();
    });
  }

  private observe(w: Workload): void {
    this.workloads.set(workloadKey(w), w);
    this.enqueue(workloadKey(w));
  }

  private forget(key: string): void {
    this.workloads.delete(key);
    this.enqueue(key);
  }

  /** One reconcile at a time per workload, always from the latest observed spec. */
  private enqueue(key: string): void {
    const prev = this.queue.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.reconcile(key)).catch((err) => this.o.log(`${key}: ${(err as Error).message}`));
    this.queue.set(key, next);
  }

  private desired(key: string): Instance[] {
    const w = this.workloads.get(key);
    if (!w || w.replicas < 1 || this.closed) return [];
    return w.containers.flatMap((c, i) => {
      const program = this.o.programFor(c.image);
      if (!program) return [];
      const name = containerName(c, i);
      // The whole pod template as the kubelet sees it: `kubectl rollout restart` only adds an annotation.
      const hash = createHash("sha256").update(JSON.stringify([c, w.serviceAccountName, w.labels, w.annotations, program.name])).digest("hex").slice(0, 12);
      const id = `${key}/${name}`;
      return [{
        key: id, workload: w, container: c, containerName: name, program, hash, state: "waiting" as State, ports: new Map(), restarts: 0, oomKills: 0,
        log: join(this.o.dir, "workloads", `${w.namespace}.${w.name}.${name}.log`.replace(/[^\w.-]/g, "_")), stopping: false, onRunning: [],
      }];
    });
  }

  private async reconcile(key: string): Promise<void> {
    const want = new Map(this.desired(key).map((i) => [i.key, i]));
    for (const [id, current] of this.instances) {
      if (!id.startsWith(`${key}/`)) continue;
      const next = want.get(id);
      if (next && next.hash === current.hash) {
        const generationChanged = current.workload.generation !== next.workload.generation;
        current.workload = next.workload;
        want.delete(id);
        if (generationChanged && current.state === "running" && current.workload.kind === "KnativeService") this.reportServing(current);
        continue;
      }
      if (next && current.state === "running" && current.program.fixedPorts.length === 0) {
        // A rolling update: the replacement starts first; this one stops once that is ready.
        this.instances.delete(id);
        this.retiring.add(current);
        next.onRunning.push(() => setTimeout(() => void this.stopInstance(current, "its replacement is ready"), OVERLAP_MS));
        continue;
      }
      // A replacement that never got ready hands its predecessor's retirement on.
      if (next) next.onRunning.push(...current.onRunning.splice(0));
      await this.stopInstance(current, next ? "its spec changed" : "it is no longer wanted");
    }
    for (const old of this.retiring) if (old.key.startsWith(`${key}/`) && !want.has(old.key) && !this.instances.has(old.key)) await this.stopInstance(old, "it is no longer wanted");
    for (const inst of want.values()) {
      this.instances.set(inst.key, inst);
      await this.launch(inst);
    }
    this.writeState();
  }

  private setState(inst: Instance, state: State, reason?: string): void {
    const changed = inst.state !== state || inst.reason !== reason;
    inst.state = state;
    if (reason === undefined) delete inst.reason;
    else inst.reason = reason;
    this.writeState();
    if (changed && inst.workload.kind === "KnativeService" && state !== "starting") this.reportServing(inst);
    if (state === "running") for (const f of inst.onRunning.splice(0)) f();
  }

  /**
   * What Knative Serving would write: the Service Ready at its cluster-local address while its
   * process runs. Reports of one Service go out in order, each with the state when it is sent, so
   * a late one never overwrites a newer one; a replaced process's state is not reported.
   */
  private reportServing(inst: Instance): void {
    const w = inst.workload;
    const key = workloadKey(w);
    const send = async () => {
      if (this.instances.get(inst.key) !== inst || this.closed) return;
      const body = {
        apiVersion: "serving.knative.dev/v1", kind: "Service", metadata: { name: w.name, namespace: w.namespace },
        status: servingStatus(inst.workload, inst.state === "running", inst.reason, new Date().toISOString().replace(/\.\d{3}Z$/, "Z")),
      };
      const query = new URLSearchParams({ fieldManager: "dynamo-pool-relay/local-serving", force: "true" });
      try {
        await this.o.admin.request("PATCH", `/apis/serving.knative.dev/v1/namespaces/${w.namespace}/services/${w.name}/status?${query}`, body, "application/apply-patch+yaml");
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) this.o.log(`${inst.key}: cannot report the Service's status: ${(err as Error).message}`);
      }
    };
    this.reports.set(key, (this.reports.get(key) ?? Promise.resolve()).then(send));
  }

  /** Programs that bind fixed ports must hold them before any other Go program starts (those would take :8080 for their health probes). */
  private fixedPortsPending(except: Instance): Instance | undefined {
    return [...this.instances.values()].find((i) => i !== except && i.program.fixedPorts.length > 0 && i.state !== "running");
  }

  private async launch(inst: Instance): Promise<void> {
    if (inst.stopping || this.closed) return;
    try {
      const blocker = inst.program.go && inst.program.fixedPorts.length === 0 ? this.fixedPortsPending(inst) : undefined;
      if (blocker) return this.retry(inst, `waiting for ${blocker.key} to hold ports ${blocker.program.fixedPorts.join(", ")}`, 500);
      for (const port of inst.program.fixedPorts) {
        if (!(await portFree(port))) {
          const holders = portHolders(port).map((h) => `pid ${h.pid} (${h.command.slice(0, 120)})`).join(", ") || "another process";
          return this.retry(inst, `port ${port} is already in use by ${holders}: ${inst.program.name} binds :${port} itself, so only one local Knative can run on this host (stop the other one, e.g. another npm start or npm test)`, 5000);
        }
      }
      const env = await this.environment(inst);
      // Stopped or replaced while the environment was built: start nothing.
      if (inst.stopping || this.closed) return;
      if (typeof env === "string") return this.retry(inst, env, 2000);
      this.setState(inst, "starting");
      const argv = [...inst.program.command, ...(inst.container.args ?? [])];
      const memory = memoryLimitBytes(inst.container);
      const fd = openSync(inst.log, "a");
      const cgroup = memory === undefined ? undefined : memoryCgroup(memory);
      const limited = cgroup && "wrap" in cgroup ? cgroup : undefined;
      const { command, args } = commandIn(limited, argv);
      let child: ChildProcess;
      try {
        child = spawn(command, args, { cwd: inst.program.cwd ?? this.o.dir, env, stdio: ["ignore", fd, fd] });
      } catch (err) {
        limited?.remove();
        throw err;
      } finally {
        closeSync(fd);
      }
      inst.child = child;
      inst.startedAt = Date.now();
      child.on("exit", (code, signal) => {
        // Counted whatever became of the instance (stopped, replaced): a kill over the limit is one.
        const oom = limited && limited.oomKills() > 0;
        if (oom) inst.oomKills++;
        // The wrapping shell's own failures: it could not join the cgroup (2), or found no command (127).
        const wrapper = limited && (code === 2 || code === 127) ? `, maybe the memory cgroup's shell: ${code === 2 ? "it could not join the cgroup" : "no such command"}` : "";
        this.exited(inst, child, code, oom ? OOM_KILLED : signal, wrapper);
        if (limited && !limited.remove()) this.o.log(`${inst.key}: cannot remove its memory cgroup`);
      });
      // A spawn that fails (no /bin/sh, or without a cgroup a missing binary) emits only this, no exit.
      child.on("error", (err) => {
        if (child.pid !== undefined) return this.o.log(`${inst.key}: ${err.message}`);
        limited?.remove();
        this.exited(inst, child, null, err.message);
      });
      if (cgroup) inst.memoryLimit = "how" in cgroup ? cgroup.how : `not applied: ${cgroup.why}`;
      this.o.log(`${inst.key}: started ${inst.program.name} (pid ${child.pid}) ports ${[...inst.ports].map(([c, l]) => `${c}->${l}`).join(" ") || "-"}${inst.memoryLimit ? `; memory limit: ${inst.memoryLimit}` : ""}`);
      if (inst.program.fixedPorts.length > 0) await this.verifyFixedPorts(inst, child);
      else await this.probe(inst, child);
    } catch (err) {
      this.retry(inst, (err as Error).message, 2000);
    }
  }

  /** The dispatcher only logs when it cannot bind: check that the listening sockets are its own. */
  private async verifyFixedPorts(inst: Instance, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && inst.child === child && child.exitCode === null) {
      const held = inst.program.fixedPorts.map((p) => portHolders(p));
      if (held.every((hs) => hs.some((h) => h.pid === child.pid))) {
        this.setState(inst, "running");
        this.kickWaiting();
        return;
      }
      const foreign = held.flat().find((h) => h.pid !== child.pid);
      if (foreign) {
        this.discard(inst, child);
        return this.retry(inst, `port ${inst.program.fixedPorts.join("/")} was taken by pid ${foreign.pid} (${foreign.command.slice(0, 120)}) while ${inst.program.name} started`, 5000);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (inst.child === child && child.exitCode === null) {
      this.discard(inst, child);
      this.retry(inst, `${inst.program.name} did not listen on ${inst.program.fixedPorts.join(", ")} within 15 s`, 5000);
    }
  }

  /** The readiness probe: every port it was given accepts a connection (a program without ports is ready once started). */
  private async probe(inst: Instance, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const ports = [...inst.ports.values()];
    while (inst.child === child && child.exitCode === null) {
      const open = await Promise.all(ports.map((p) => accepts(p)));
      if (open.every(Boolean)) return this.setState(inst, "running");
      if (Date.now() > deadline) {
        this.discard(inst, child);
        return this.retry(inst, `${inst.program.name} did not listen on ${ports.join(", ")} within ${READY_TIMEOUT_MS / 1000} s`, 5000);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Kills a process this instance gives up on; its exit then schedules nothing (the caller does). */
  private discard(inst: Instance, child: ChildProcess): void {
    if (inst.child === child) delete inst.child;
    child.kill("SIGKILL");
  }

  private kickWaiting(): void {
    for (const i of this.instances.values()) {
      if (i.state === "waiting" && i.timer) {
        clearTimeout(i.timer);
        delete i.timer;
        void this.launch(i);
      }
    }
  }

  private retry(inst: Instance, reason: string, ms: number): void {
    if (inst.reason !== reason) this.o.log(`${inst.key}: ${reason}`);
    this.setState(inst, "waiting", reason);
    clearTimeout(inst.timer);
    inst.timer = setTimeout(() => (delete inst.timer, void this.launch(inst)), ms);
  }

  private exited(inst: Instance, child: ChildProcess, code: number | null, signal: string | null, hint = ""): void {
    if (inst.child !== child) return;
    delete inst.child;
    if (inst.stopping || this.closed) return;
    if (inst.startedAt !== undefined && Date.now() - inst.startedAt > BACKOFF_RESET_MS) inst.restarts = 0;
    clearTimeout(inst.timer);
    const wait = BACKOFF_MS[Math.min(inst.restarts, BACKOFF_MS.length - 1)]!;
    inst.restarts++;
    this.o.log(`${inst.key}: ${inst.program.name} exited (${signal ?? `code ${code}`}${hint}); restart ${inst.restarts} in ${wait / 1000} s; log ${inst.log}`);
    this.setState(inst, "crashed", `exited with ${signal ?? `code ${code}`}`);
    inst.timer = setTimeout(() => (delete inst.timer, void this.launch(inst)), wait);
  }

  private async stopInstance(inst: Instance, why: string): Promise<void> {
    inst.stopping = true;
    clearTimeout(inst.timer);
    if (this.instances.get(inst.key) === inst) this.instances.delete(inst.key);
    this.retiring.delete(inst);
    if (!this.closed) this.writeState();
    const child = inst.child;
    if (!child || child.exitCode !== null) return;
    this.o.log(`${inst.key}: stopping (${why})`);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }

  /** The process env, or why it cannot be built yet. */
  private async environment(inst: Instance): Promise<NodeJS.ProcessEnv | string> {
    const w = inst.workload;
    const kubeconfig = await this.serviceAccountKubeconfig(w.namespace, w.serviceAccountName, this.o.serverFor?.(inst.program) ?? this.o.server);
    if (typeof kubeconfig !== "string") return kubeconfig.error;
    const data = await this.referencedData(w.namespace, inst.container.env ?? []);
    const pod = {
      name: `${w.name}-local`, namespace: w.namespace, uid: w.uid, serviceAccountName: w.serviceAccountName,
      nodeName: "localhost", podIP: "127.0.0.1", labels: w.labels, annotations: w.annotations,
    };
    const { env, errors } = resolveEnv(inst.container.env, pod, (kind, name, key) => data.get(`${kind}/${name}`)?.[key]);
    if (errors.length) return `cannot build the environment: ${errors.join("; ")}`;
    for (const [k, v] of Object.entries(env)) env[k] = localPath(v, inst.program.paths);
    inst.ports.clear();
    if (w.kind === "KnativeService") {
      const port = await freePort();
      inst.ports.set(servingPort(inst.container), port);
      env["PORT"] = String(port);
    } else {
      for (const [containerPort, name] of Object.entries(inst.program.portEnv)) {
        const port = await freePort();
        inst.ports.set(Number(containerPort), port);
        env[name] = String(port);
      }
      for (const p of inst.program.fixedPorts) inst.ports.set(p, p);
    }
    if (inst.program.go) env["PROFILING_PORT"] = String(await freePort());
    return {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: process.env["HOME"] ?? "/tmp",
      ...env,
      KUBECONFIG: kubeconfig,
      HTTP_PROXY: this.o.proxyUrl,
      HTTPS_PROXY: this.o.proxyUrl,
      NO_PROXY: "127.0.0.1,localhost",
    };
  }

  private async referencedData(namespace: string, vars: readonly EnvVar[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    for (const v of vars) {
      const ref = v.valueFrom?.configMapKeyRef ? ["ConfigMap", v.valueFrom.configMapKeyRef.name] as const : v.valueFrom?.secretKeyRef ? ["Secret", v.valueFrom.secretKeyRef.name] as const : undefined;
      if (!ref || out.has(`${ref[0]}/${ref[1]}`)) continue;
      const obj = await this.o.admin.get<{ data?: Record<string, string> }>({ apiVersion: "v1", kind: ref[0], namespace, name: ref[1] });
      const data = obj?.data ?? {};
      out.set(`${ref[0]}/${ref[1]}`, ref[0] === "Secret" ? Object.fromEntries(Object.entries(data).map(([k, b64]) => [k, Buffer.from(b64, "base64").toString("utf8")])) : data);
    }
    return out;
  }

  /** A kubeconfig with a fresh token of the ServiceAccount, as the kubelet mounts one into the pod. */
  private async serviceAccountKubeconfig(namespace: string, name: string, server: string): Promise<string | { error: string }> {
    let token: string;
    try {
      const r = (await this.o.admin.request("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
        apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 7 * 24 * 3600 },
      })) as { status: { token: string } };
      token = r.status.token;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return { error: `ServiceAccount ${namespace}/${name} does not exist` };
      throw err;
    }
    const file = join(this.o.dir, "workloads", `sa.${namespace}.${name}.kubeconfig`);
    const config = {
      apiVersion: "v1", kind: "Config", "current-context": "pod",
      clusters: [{ name: "local", cluster: { server, "certificate-authority": this.o.caFile } }],
      users: [{ name: `${namespace}/${name}`, user: { token } }],
      contexts: [{ name: "pod", context: { cluster: "local", user: `${namespace}/${name}`, namespace } }],
    };
    // JSON, which is YAML too: the functions read it without a YAML parser, as light as the token
    // file a real kubelet mounts (shared/kube/credentials.ts).
    writeFileSync(`${file}.tmp`, JSON.stringify(config), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    return file;
  }

  /** The local port behind a Service's targetPort, for pods its selector picks. */
  endpoint(namespace: string, selector: Record<string, string> | undefined, targetPort: number | string): number | undefined {
    for (const inst of [...this.instances.values(), ...this.retiring]) {
      if (inst.workload.namespace !== namespace || inst.state !== "running" || !selects(selector, inst.workload.labels)) continue;
      const containerPort = containerPortOf(inst.container, targetPort);
      const local = containerPort === undefined ? undefined : inst.ports.get(containerPort);
      if (local !== undefined) return local;
    }
    return undefined;
  }

  /** The local port of a Knative Service's container: what Serving would route `<name>.<namespace>.svc` to. */
  servingEndpoint(namespace: string, name: string): number | undefined {
    for (const inst of [...this.instances.values(), ...this.retiring]) {
      const w = inst.workload;
      if (w.kind === "KnativeService" && w.namespace === namespace && w.name === name && inst.state === "running") return inst.ports.get(servingPort(inst.container));
    }
    return undefined;
  }

  private writeState(): void {
    const state = [...this.instances.values(), ...this.retiring].map((i) => ({
      workload: workloadKey(i.workload), generation: i.workload.generation, container: i.containerName, program: i.program.name, state: i.state,
      ...(i.reason ? { reason: i.reason } : {}), ...(i.memoryLimit ? { memoryLimit: i.memoryLimit } : {}), oomKills: i.oomKills, pid: i.child?.pid, ports: Object.fromEntries(i.ports), restarts: i.restarts, log: i.log,
    }));
    const file = join(this.o.dir, "workloads.json");
    writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2));
    renameSync(`${file}.tmp`, file);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await Promise.all([...this.instances.values(), ...this.retiring].map((i) => this.stopInstance(i, "the kubelet stops")));
    this.writeState();
  }
}
