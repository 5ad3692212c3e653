/**
 * The local node's addresses and its daemons' configuration, as pure functions of a slot: each
 * node on this machine takes a free slot (0-15), which gives it a link to the host, a pod range and
 * a Service range of its own, so two stacks (npm start beside npm test) never share a route.
 *
 * Addresses: the link is a /30 in 198.51.100.0/24 (TEST-NET-2, never routed anywhere); pods and
 * Services take 10.200+slot.0.0/16 and 10.220+slot.0.0/16, reachable only through the node.
 */
import { join } from "node:path";
import { stringify } from "yaml";

export const SLOTS = 16;
export const NODE_NAME = "poolrelay-node";

/**
 * The slots in the order a new node tries them: from `next` (the one after the last claimed) round
 * to the one before, so a slot just freed is the last taken again, and a check that a stopped node
 * left nothing never sees another node's link or cgroups of the same name (npm test runs lanes).
 */
export function slotOrder(next: number): number[] {
  const from = Number.isInteger(next) ? ((next % SLOTS) + SLOTS) % SLOTS : 0;
  return Array.from({ length: SLOTS }, (_, i) => (from + i) % SLOTS);
}

export interface NodePlan {
  slot: number;
  /** The host's end of the link, in the host's network namespace: the API server listens here. */
  hostIP: string;
  /** The node's end, in the node's network namespace: its InternalIP. */
  nodeIP: string;
  /** The host's name of its end of the link (also the slot's claim: the name is taken or not). */
  hostLink: string;
  /** The other end's name until it is moved into the node. */
  peerLink: string;
  podCIDR: string;
  serviceCIDR: string;
  /** The `kubernetes` Service's ClusterIP, the first of the range. */
  apiServiceIP: string;
  dnsIP: string;
  /** The node's cgroup under each v1 controller (the kubelet's cgroupRoot). */
  cgroupRoot: string;
}

export function nodePlan(slot: number): NodePlan {
  if (!Number.isInteger(slot) || slot < 0 || slot >= SLOTS)
    throw new Error(`a node slot is a whole number from 0 to ${SLOTS - 1}, got ${slot}`);
  return {
    slot,
    hostIP: `198.51.100.${4 * slot + 1}`,
    nodeIP: `198.51.100.${4 * slot + 2}`,
    hostLink: `prnode${slot}`,
    peerLink: `prpeer${slot}`,
    podCIDR: `10.${200 + slot}.0.0/16`,
    serviceCIDR: `10.${220 + slot}.0.0/16`,
    apiServiceIP: `10.${220 + slot}.0.1`,
    dnsIP: `10.${220 + slot}.0.10`,
    cgroupRoot: `poolrelay-node${slot}`,
  };
}

/** containerd 2.x (config version 3): its own root, state and socket under `dir`, runc from `bin`, the CNI config in dir/cni. */
export function containerdConfig(dir: string, bin: string, sandboxImage: string): string {
  const q = JSON.stringify;
  return `version = 3
root = ${q(join(dir, "containerd/root"))}
state = ${q(join(dir, "containerd/state"))}

[grpc]
  address = ${q(join(dir, "containerd/containerd.sock"))}

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = ${q(sandboxImage)}

[plugins.'io.containerd.cri.v1.runtime']
  # This VM's capability bounding set lacks CAP_SYS_RESOURCE: not even root may lower oom_score_adj.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = ${q(join(bin, "runc"))}
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [${q(join(bin, "cni"))}]
    conf_dir = ${q(join(dir, "cni"))}

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'
`;
}

/** The pod network: one bridge in the node, host-local addresses from the slot's range, port mappings. */
export function cniConfig(plan: NodePlan, dir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "poolrelay-pods",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: plan.podCIDR }]],
            routes: [{ dst: "0.0.0.0/0" }],
            dataDir: join(dir, "cni-ipam"),
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/** The kubelet on cgroup v1 with the cgroupfs driver, its logs and DNS in the node's folder. */
export function kubeletConfig(plan: NodePlan, dir: string): string {
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // Kubernetes 1.35 refuses cgroup v1 unless told otherwise; this machine has only v1.
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: `/${plan.cgroupRoot}`,
    containerRuntimeEndpoint: `unix://${join(dir, "containerd/containerd.sock")}`,
    // Open, as the API server has no kubelet client certificate here (logs, exec): any pod on this
    // test node can reach it too; nothing off the machine can (Known limits).
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: "AlwaysAllow" },
    clusterDNS: [plan.dnsIP],
    clusterDomain: "cluster.local",
    resolvConf: join(dir, "resolv.conf"),
    podLogsDir: join(dir, "pod-logs"),
    failSwapOn: false,
    readOnlyPort: 0,
    serializeImagePulls: false,
    // Images are imported, never pulled: nothing may garbage-collect them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "1%",
      "imagefs.available": "1%",
      "nodefs.inodesFree": "1%",
    },
    maxPods: 110,
    protectKernelDefaults: false,
    enforceNodeAllocatable: ["pods"],
    shutdownGracePeriod: "0s",
  });
}

/** kube-proxy in nftables mode, leaving conntrack's machine-wide settings as they are. */
export function kubeProxyConfig(plan: NodePlan, dir: string): string {
  return stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "nftables",
    clientConnection: { kubeconfig: join(dir, "kube-proxy.kubeconfig") },
    clusterCIDR: plan.podCIDR,
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    metricsBindAddress: "127.0.0.1:10249",
    healthzBindAddress: "127.0.0.1:10256",
  });
}
