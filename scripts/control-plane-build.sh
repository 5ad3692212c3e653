#!/usr/bin/env bash
# Builds the Go programs of the local control plane from the Go module proxy, into a cache folder
# keyed on their go.mod/go.sum (and sources), and prints that folder on the last line of stdout. A
# warm cache builds nothing. Two sets, each from its own module(s) so their dependencies never mix:
#
#   kube     (default) tools/control-plane/: etcd, kube-apiserver, kube-controller-manager,
#            kube-scheduler, kubectl, kwok, and kwok-stages.yaml (kwok's own "fast" node and pod
#            stages, which kwok needs to make nodes and pods Ready).
#            KUBEBUILDER_ASSETS naming a folder that holds all of these wins: nothing is built.
#   knative  tools/knative/: Knative Eventing v0.50.0's controller, webhook, Broker and
#            InMemoryChannel controllers, broker ingress and filter, InMemoryChannel dispatcher,
#            PingSource adapter and ApiServerSource receive adapter (unmodified upstream commands),
#            and knative-check (Knative's defaulting and validation); Knative Serving v0.50.0's
#            activator, autoscaler, controller, queue and webhook, and Traefik v3.6.12 (its
#            Knative provider is the KIngress; built as the main module, since its go.mod has
#            replace directives that `go install` refuses); plus config/: the manifests from the
#            eventing, serving, networking and caching modules' config/ folders.
#            KNATIVE_ASSETS naming a folder that holds all of these wins.
#   node     tools/node/ and tools/control-plane/kube: a real node's programs: kubelet and
#            kube-proxy (Kubernetes v1.36.3), containerd 2.4.2 with its runc shim and ctr, runc 1.5.3
#            (cgo, with seccomp: needs gcc and libseccomp-dev), the CNI plugins bridge, host-local,
#            loopback and portmap (v1.10.0), CoreDNS 1.14.7, and the pause program of a pod's
#            sandbox (Kubernetes' own pause.c, compiled static). NODE_ASSETS naming a folder that
#            holds all of these wins.
#
# Usage: scripts/control-plane-build.sh [kube|knative|node|all]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/$(basename "$0")"
set_name=${1:-kube}
cache="${POOLRELAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-pool-relay}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"

log() { printf '[control-plane:build] %s\n' "$*" >&2; }
# Whatever a failed or finished build leaves behind (a staged folder that was not moved into place).
staged="" fallback="" traefik_src=""
trap 'rm -rf ${staged:+"$staged"} ${fallback:+"$fallback"} ${traefik_src:+"$traefik_src"}' EXIT

if [ "$set_name" = all ]; then
  "$self" kube >/dev/null
  "$self" node >/dev/null
  exec "$self" knative
fi

timed() {
  local dir=$1 name=$2; shift 2
  local start=$SECONDS
  log "building $name (a cold build takes many minutes on 2 cores)..."
  if ! (cd "$dir" && go mod download >&2); then
    log "module download failed for $name: see the lines above for the module the proxy does not serve"
    return 1
  fi
  (cd "$dir" && "$@") >&2 || return 1
  log "built $name in $((SECONDS - start)) s"
}

need_go() { command -v go >/dev/null || { log "go is not installed; it is needed to build the $set_name binaries"; exit 1; }; }

# Each build stages in a folder of its own; the first complete one becomes the cache entry, so a
# concurrent build never replaces binaries another run is using.
finish() {
  local out=$1 staged=$2
  if complete "$out"; then rm -rf "$staged"; else rm -rf "$out" && mv "$staged" "$out"; fi
  log "$set_name binaries ready in $out ($(du -sh "$out" | cut -f1))"
  echo "$out"
}

case "$set_name" in
kube)
  tools="$root/tools/control-plane"
  binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
  k8s_version=v1.36.3
  complete() { local b; for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 1; done; [ -s "$1/kwok-stages.yaml" ]; }
  if [ -n "${KUBEBUILDER_ASSETS:-}" ] && complete "$KUBEBUILDER_ASSETS"; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    echo "$KUBEBUILDER_ASSETS"; exit 0
  fi
  key=$(cat "$tools"/*/go.mod "$tools"/*/go.sum "$self" | sha256sum | cut -c1-16)
  out="$cache/control-plane/$key"
  if complete "$out"; then log "cache warm: $out"; echo "$out"; exit 0; fi
  need_go
  mkdir -p "$(dirname "$out")"
  staged=$(mktemp -d "$out.partial.XXXXXX")
  stamp="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=36 -X $pkg.gitTreeState=clean"
  done
  timed "$tools/etcd" etcd go build -trimpath -ldflags "-s -w" -o "$staged/etcd" go.etcd.io/etcd/server/v3
  timed "$tools/kwok" kwok go build -trimpath -ldflags "-s -w" -o "$staged/kwok" sigs.k8s.io/kwok/cmd/kwok
  kube_cmds=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  if ! timed "$tools/kube" kube go build -trimpath -ldflags "$stamp" -o "$staged/" "${kube_cmds[@]}"; then
    # The handbook's fallback pair when the proxy lacks a v1.36.3 module: v1.36.1 with v0.36.1. The
    # module pins every version (require and replace lines), so rewriting them is enough; -mod=mod
    # fills in go.sum (a tidy here would drop the requires: the folder holds no Go files).
    log "retrying kube with the fallback versions k8s.io/kubernetes v1.36.1 and staging v0.36.1"
    fallback=$(mktemp -d)
    cp "$tools/kube/go.mod" "$fallback/"
    sed -i 's/ v1\.36\.3\b/ v1.36.1/g; s/ v0\.36\.3\b/ v0.36.1/g' "$fallback/go.mod"
    start=$SECONDS
    (cd "$fallback" && go build -trimpath -ldflags "${stamp//v1.36.3/v1.36.1}" -o "$staged/" "${kube_cmds[@]}") >&2 \
      || { log "the fallback failed too: see the lines above for the module the proxy does not serve"; exit 1; }
    log "built kube (fallback v1.36.1) in $((SECONDS - start)) s"
  fi
  kwok_dir=$(cd "$tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
  for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    printf -- '---\n# from sigs.k8s.io/kwok kustomize/stage/%s (Apache-2.0)\n' "$f"
    cat "$kwok_dir/kustomize/stage/$f"
  done > "$staged/kwok-stages.yaml"
  finish "$out" "$staged"
  ;;
knative)
  tools="$root/tools/knative"
  binaries=(knative-check apiserver_receive_adapter filter ingress channel_dispatcher mtping activator autoscaler controller queue webhook traefik
    eventing/controller eventing/webhook eventing/mtchannel_broker eventing/channel_controller)
  complete() { local b; for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 1; done; [ -s "$1/config/eventing/core/resources/broker.yaml" ]; }
  if [ -n "${KNATIVE_ASSETS:-}" ] && complete "$KNATIVE_ASSETS"; then
    log "using KNATIVE_ASSETS=$KNATIVE_ASSETS"
    echo "$KNATIVE_ASSETS"; exit 0
  fi
  key=$( (cd "$tools" && find . -type f \( -name 'go.*' -o -name '*.go' \) | sort | xargs cat; cat "$self") | sha256sum | cut -c1-16)
  out="$cache/knative/$key"
  if complete "$out"; then log "cache warm: $out"; echo "$out"; exit 0; fi
  need_go
  mkdir -p "$(dirname "$out")"
  staged=$(mktemp -d "$out.partial.XXXXXX")
  upstream=(knative.dev/eventing/cmd/apiserver_receive_adapter knative.dev/eventing/cmd/broker/filter knative.dev/eventing/cmd/broker/ingress
    knative.dev/eventing/cmd/in_memory/channel_dispatcher knative.dev/eventing/cmd/mtping)
  serving=(knative.dev/serving/cmd/activator knative.dev/serving/cmd/autoscaler knative.dev/serving/cmd/controller knative.dev/serving/cmd/queue knative.dev/serving/cmd/webhook)
  timed "$tools" knative go build -trimpath -ldflags "-s -w" -o "$staged/" ./cmd/knative-check "${upstream[@]}" "${serving[@]}"
  # Eventing's control plane: its controller and webhook share their names with Serving's.
  mkdir -p "$staged/eventing"
  timed "$tools" "Knative Eventing's controllers" go build -trimpath -ldflags "-s -w" -o "$staged/eventing/" knative.dev/eventing/cmd/controller \
    knative.dev/eventing/cmd/webhook knative.dev/eventing/cmd/mtchannel_broker knative.dev/eventing/cmd/in_memory/channel_controller
  traefik_json=$(cd "$tools" && go mod download -json github.com/traefik/traefik/v3@v3.6.12) ||
    { log "the module github.com/traefik/traefik/v3@v3.6.12 could not be downloaded: $traefik_json"; exit 1; }
  traefik_dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$traefik_json")
  [ -d "$traefik_dir" ] || { log "go mod download named no folder for github.com/traefik/traefik/v3@v3.6.12: $traefik_json"; exit 1; }
  traefik_src=$(mktemp -d)
  cp -r "$traefik_dir/." "$traefik_src/" && chmod -R u+w "$traefik_src"
  timed "$traefik_src" traefik go build -trimpath -ldflags "-s -w" -o "$staged/traefik" ./cmd/traefik
  rm -rf "$traefik_src"
  # Knative's own manifests, from the exact module versions built above (read-only in the module cache).
  for module in eventing serving networking caching; do
    dir=$(cd "$tools" && go list -m -f '{{.Dir}}' "knative.dev/$module")
    mkdir -p "$staged/config/$module"
    (cd "$dir/config" && find . -name '*.yaml' -exec cp --parents -t "$staged/config/$module/" {} +)
    chmod -R u+w "$staged/config/$module"
  done
  # The ConfigMaps of images Eventing's controller reads at start, which the module keeps outside config/.
  eventing_dir=$(cd "$tools" && go list -m -f '{{.Dir}}' knative.dev/eventing)
  mkdir -p "$staged/config/eventing-integrations"
  cp "$eventing_dir"/third_party/eventing-integrations-latest/*.yaml "$staged/config/eventing-integrations/"
  chmod -R u+w "$staged/config/eventing-integrations"
  finish "$out" "$staged"
  ;;
node)
  tools="$root/tools/node"
  kube="$root/tools/control-plane/kube"
  binaries=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc coredns pause cni/bridge cni/host-local cni/loopback cni/portmap)
  complete() { local b; for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 1; done; }
  if [ -n "${NODE_ASSETS:-}" ] && complete "$NODE_ASSETS"; then
    log "using NODE_ASSETS=$NODE_ASSETS"
    echo "$NODE_ASSETS"; exit 0
  fi
  key=$(cat "$tools"/*/go.mod "$tools"/*/go.sum "$kube/go.mod" "$kube/go.sum" "$self" | sha256sum | cut -c1-16)
  out="$cache/node/$key"
  if complete "$out"; then log "cache warm: $out"; echo "$out"; exit 0; fi
  need_go
  for tool in gcc pkg-config; do command -v "$tool" >/dev/null || { log "$tool is not installed; runc and pause need it (scripts/host-packages.sh installs it)"; exit 1; }; done
  pkg-config --exists libseccomp || { log "libseccomp-dev is not installed; runc needs it (scripts/host-packages.sh installs it)"; exit 1; }
  mkdir -p "$(dirname "$out")"
  staged=$(mktemp -d "$out.partial.XXXXXX")
  mkdir -p "$staged/cni"
  stamp="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X $pkg.gitVersion=v1.36.3 -X $pkg.gitMajor=1 -X $pkg.gitMinor=36 -X $pkg.gitTreeState=clean"
  done
  timed "$kube" "kubelet and kube-proxy" go build -trimpath -ldflags "$stamp" -o "$staged/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  # runc is the one cgo program: seccomp filters come from libseccomp.
  timed "$tools/runc" runc env CGO_ENABLED=1 go build -trimpath -tags seccomp -ldflags "-s -w" -o "$staged/" github.com/opencontainers/runc
  timed "$tools/containerd" containerd go build -trimpath -tags no_btrfs -ldflags "-s -w" -o "$staged/" \
    github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr
  cni=github.com/containernetworking/plugins/plugins
  timed "$tools/cni" "CNI plugins" go build -trimpath -ldflags "-s -w" -o "$staged/cni/" "$cni/main/bridge" "$cni/main/loopback" "$cni/ipam/host-local" "$cni/meta/portmap"
  timed "$tools/coredns" coredns go build -trimpath -ldflags "-s -w" -o "$staged/" github.com/coredns/coredns
  pause_c="$(cd "$kube" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
  gcc -Os -static -DVERSION=v3.10-poolrelay -o "$staged/pause" "$pause_c" >&2
  finish "$out" "$staged"
  ;;
*)
  log "unknown set '$set_name' (kube, knative, node or all)"; exit 2 ;;
esac
