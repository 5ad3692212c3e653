/**
 * A real Kubernetes node on this machine: containerd with runc and the CNI plugins, the kubelet and
 * kube-proxy, in PID, mount and network namespaces of their own (init.sh is their PID 1). Its one
 * link to the host is a veth pair whose host end the API server listens on; pods and Services are
 * routed from the host through it, and from the node nowhere else.
 *
 * Claiming a slot creates the pair (the name is the claim: creating it fails if another stack holds
 * it). Stopping ends init.sh (the kernel then ends every process of the node and drops its mounts
 * and devices); then cleanup.sh, in the control plane's folder, removes what remains on the host:
 * the pair if it never moved, and the cgroups. The control plane's stop, its exit hook and its
 * watchdog each run it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startComponent, type Component } from "../control-plane/processes.ts";
import {
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  NODE_NAME,
  nodePlan,
  SLOTS,
  slotOrder,
  type NodePlan,
} from "./config.ts";

const INIT = fileURLToPath(new URL("./init.sh", import.meta.url));
const CGROUPS = "/sys/fs/cgroup";
export const SANDBOX_IMAGE = "dev.local/pause:local";

function ip(...args: string[]): void {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")} failed: ${(r.stderr || r.error?.message || "").trim()}`);
}

/** Where the slot after the last one claimed on this machine is kept (tmpfs: a reboot frees every slot). */
const NEXT_SLOT = "/run/poolrelay-next-node-slot";

/** Takes the first free slot in slotOrder by creating its veth pair; the host end gets its address. */
export function claimSlot(): NodePlan {
  for (const slot of slotOrder(Number(existsSync(NEXT_SLOT) ? readFileSync(NEXT_SLOT, "utf8") : 0))) {
    const plan = nodePlan(slot);
    try {
      ip("link", "add", plan.hostLink, "type", "veth", "peer", "name", plan.peerLink);
    } catch (err) {
      // Only a name already taken means the slot is; anything else (not root, no veth) is the answer.
      if ((err as Error).message.includes("File exists")) continue;
      throw err;
    }
    try {
      ip("addr", "add", `${plan.hostIP}/30`, "dev", plan.hostLink);
      ip("link", "set", plan.hostLink, "up");
    } catch (err) {
      spawnSync("ip", ["link", "del", plan.hostLink]);
      throw err;
    }
    try {
      writeFileSync(NEXT_SLOT, String(slot + 1));
    } catch {
      // Only a hint of where to start next: without it the next node starts from slot 0.
    }
    return plan;
  }
  throw new Error(
    `every node slot (${SLOTS}) is taken: links prnode0..prnode${SLOTS - 1} exist (ip link; another stack, or one left by a killed run: poolrelay cluster down)`,
  );
}

/** The v1 hierarchies the kubelet needs its cgroupRoot in (name=systemd too; not the unified one of a hybrid). */
function hierarchies(): string[] {
  return readdirSync(CGROUPS).filter((c) => c !== "unified" && existsSync(join(CGROUPS, c, "cgroup.procs")));
}

function makeCgroups(plan: NodePlan): void {
  // What this machine has; the node's cgroup set-up and the kubelet's configuration are v1's.
  if (existsSync(join(CGROUPS, "cgroup.controllers")))
    throw new Error(`${CGROUPS} is cgroup v2: the local node is set up for cgroup v1 only`);
  for (const h of hierarchies()) {
    const dir = join(CGROUPS, h, plan.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    // A new cpuset has no CPUs or memory nodes until given its parent's.
    if (h === "cpuset")
      for (const f of ["cpuset.cpus", "cpuset.mems"]) writeFileSync(join(dir, f), readFileSync(join(CGROUPS, h, f)));
  }
}

/**
 * The shell lines that undo what is left on the host once the node's processes are gone: the link,
 * and the cgroups, deepest first, tried for up to 10 s (a cgroup is removable only once the last of
 * its processes has been reaped); exits 1 naming any left.
 */
export function cleanupScript(plan: Pick<NodePlan, "hostLink" | "cgroupRoot">): string {
  return [
    `ip link del ${plan.hostLink} 2>/dev/null || true`,
    `for _ in $(seq 100); do`,
    `  left=$(ls -d ${CGROUPS}/*/${plan.cgroupRoot} 2>/dev/null) || true`,
    `  [ -z "$left" ] && exit 0`,
    `  for h in $left; do find "$h" -depth -type d -exec rmdir {} + 2>/dev/null; done`,
    `  sleep 0.1`,
    `done`,
    `echo "cgroups left: $left" >&2; exit 1`,
  ].join("\n");
}

export interface NodeStart {
  plan: NodePlan;
  /** The control plane's folder; the node keeps its state in DIR/node. */
  dir: string;
  /** The node programs (scripts/control-plane-build.sh node). */
  bin: string;
  /** A folder of docker-archives to import (scripts/images-build.sh). */
  images: string;
  kubeletKubeconfig: string;
  kubeProxyKubeconfig: string;
  /** Records the node's process with the control plane's, before anything else can fail. */
  record: (c: Component) => Component;
}

/** Writes the node's configuration and starts init.sh; the node registers itself with the API server. */
export function startNode(n: NodeStart): void {
  const dir = join(n.dir, "node");
  mkdirSync(join(dir, "images"), { recursive: true });
  mkdirSync(join(dir, "cni"), { recursive: true });
  for (const archive of readdirSync(n.images)) symlinkSync(join(n.images, archive), join(dir, "images", archive));
  writeFileSync(join(dir, "containerd.toml"), containerdConfig(dir, n.bin, SANDBOX_IMAGE));
  writeFileSync(join(dir, "cni", "10-pods.conflist"), cniConfig(n.plan, dir));
  writeFileSync(join(dir, "kubelet.yaml"), kubeletConfig(n.plan, dir));
  writeFileSync(join(dir, "kube-proxy.yaml"), kubeProxyConfig(n.plan, dir));
  // Pods resolve cluster names only: nothing is forwarded off the machine.
  writeFileSync(join(dir, "resolv.conf"), "");
  writeFileSync(join(dir, "kubelet.kubeconfig"), readFileSync(n.kubeletKubeconfig));
  writeFileSync(join(dir, "kube-proxy.kubeconfig"), readFileSync(n.kubeProxyKubeconfig));
  writeFileSync(join(n.dir, "cleanup.sh"), `${cleanupScript(n.plan)}\n`);
  makeCgroups(n.plan);
  const node = n.record(
    startComponent(
      "node",
      "unshare",
      ["--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--propagation", "private", "--", "bash", INIT],
      n.dir,
      {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        NODE_DIR: dir,
        NODE_BIN: n.bin,
        NODE_NAME,
        NODE_IP: n.plan.nodeIP,
        ...(process.env["NODE_LOG_LEVEL"] ? { NODE_LOG_LEVEL: process.env["NODE_LOG_LEVEL"] } : {}),
      },
    ),
  );
  // init.sh waits for its end of the link, named eth0.
  const init = waitForChild(node.pid);
  ip("link", "set", n.plan.peerLink, "netns", String(init));
  execFileSync("nsenter", ["-t", String(init), "-n", "ip", "link", "set", n.plan.peerLink, "name", "eth0"]);
  ip("route", "add", n.plan.podCIDR, "via", n.plan.nodeIP, "dev", n.plan.hostLink);
  ip("route", "add", n.plan.serviceCIDR, "via", n.plan.nodeIP, "dev", n.plan.hostLink);
}

/** The pid (on the host) of unshare's child, init.sh. */
function waitForChild(pid: number): number {
  for (let i = 0; i < 200; i++) {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    if (children) return Number(children.split(/\s+/)[0]);
    execFileSync("sleep", ["0.02"]);
  }
  throw new Error("the node's init did not start within 4 s");
}
