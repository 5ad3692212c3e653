#!/usr/bin/env bash
# PID 1 of the local node: runs in PID, mount and network namespaces of its own (dev/node/index.ts
# starts it with unshare), so that when it ends, for any reason, the kernel ends every process of
# the node (containerd, its shims, every container, kubelet, kube-proxy) and drops every mount and
# network device it made. On the host there remain only the cgroups (and the link, if its end never
# moved in here), which cleanup.sh in the control plane's folder removes.
#
# Environment: NODE_DIR (state and config), NODE_BIN (the node programs), NODE_NAME, NODE_IP (the
# node's end of its /30 link to the host), NODE_LOG_LEVEL (the kubelet's and kube-proxy's -v, 1).
set -euo pipefail
trap 'exit 0' TERM INT
log() { printf '%s [node] %s\n' "$(date -u +%FT%T.%3NZ)" "$*"; }

# The link the starter moves in from the host, named eth0 here. No default route: a pod's packet
# to anything but the host's end of this link (the API server) or this node has nowhere to go.
until ip link show eth0 >/dev/null 2>&1; do sleep 0.05; done
ip link set lo up
ip addr add "$NODE_IP/30" dev eth0
ip link set eth0 up
echo 1 > /proc/sys/net/ipv4/ip_forward
# A pod's packet to a Service whose endpoint is on the same bridge must pass kube-proxy's rules,
# or the answer comes back from the wrong address.
if [ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then
  log "the kernel's br_netfilter is not loaded (modprobe br_netfilter): pods could not reach Services on the node"
  exit 1
fi
echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables

# Mounts made here (container root filesystems, volumes) are shared within the node, so containerd
# sees what the kubelet mounts; the namespace was made private, so none of them reach the host.
mount --make-rshared /

# The kubelet writes kernel tunables it wants (vm.overcommit_memory, kernel.panic, ...) when they
# differ; those are machine-wide. Here they read as the kubelet wants them, and the host's stay.
mkdir -p "$NODE_DIR/sysctl"
while read -r key value; do
  file="/proc/sys/${key//.//}"
  [ "$(cat "$file")" = "$value" ] && continue
  echo "$value" > "$NODE_DIR/sysctl/$key"
  mount --bind "$NODE_DIR/sysctl/$key" "$file"
done <<'TUNABLES'
vm.overcommit_memory 1
vm.panic_on_oom 0
kernel.panic 10
kernel.panic_on_oops 1
kernel.keys.root_maxkeys 1000000
kernel.keys.root_maxbytes 25000000
TUNABLES

export PATH="$NODE_BIN:$PATH"
containerd --config "$NODE_DIR/containerd.toml" >> "$NODE_DIR/containerd.log" 2>&1 &
containerd=$!
sock="$NODE_DIR/containerd/containerd.sock"
until [ -S "$sock" ] && ctr --address "$sock" version >/dev/null 2>&1; do
  kill -0 "$containerd" 2>/dev/null || { log "containerd exited; see containerd.log"; exit 1; }
  sleep 0.1
done
log "containerd ready"
for archive in "$NODE_DIR"/images/*.tar; do
  [ -e "$archive" ] || continue
  ctr --address "$sock" -n k8s.io images import --no-unpack --all-platforms "$archive" >> "$NODE_DIR/images.log" 2>&1
done
log "images imported"

kubelet --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$NODE_DIR/kubelet.kubeconfig" --root-dir="$NODE_DIR/kubelet" \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v="${NODE_LOG_LEVEL:-1}" >> "$NODE_DIR/kubelet.log" 2>&1 &
kube-proxy --config="$NODE_DIR/kube-proxy.yaml" --hostname-override="$NODE_NAME" --v="${NODE_LOG_LEVEL:-1}" >> "$NODE_DIR/kube-proxy.log" 2>&1 &
log "kubelet and kube-proxy started"
# The node is as alive as each of its daemons: when one ends, the node ends (and is seen to).
wait -n || true
log "a node daemon exited; stopping the node"
exit 1
