#!/usr/bin/env bash
# Builds the control-plane binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kwok, and kubectl for the manifest tests) from the Go modules under tools/control-plane into a cache folder keyed on their go.mod and
# go.sum files, and prints that folder on the last line of stdout. A warm cache builds nothing.
# It also writes kwok-stages.yaml there: kwok's own "fast" node and pod stages (from the kwok module),
# which kwok needs to make nodes and pods Ready.
# KUBEBUILDER_ASSETS naming a folder that already holds all of these wins: nothing is built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/tools/control-plane"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
k8s_version=v1.36.3

log() { printf '[control-plane:build] %s\n' "$*" >&2; }
complete() { local b; for b in "${binaries[@]}"; do [ -x "$1/$b" ] || return 1; done; [ -s "$1/kwok-stages.yaml" ]; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && complete "$KUBEBUILDER_ASSETS"; then
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  echo "$KUBEBUILDER_ASSETS"; exit 0
fi

key=$(cat "$tools"/*/go.mod "$tools"/*/go.sum "$0" | sha256sum | cut -c1-16)
out="${POOLRELAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-pool-relay}/control-plane/$key"
if complete "$out"; then
  log "cache warm: $out"
  echo "$out"; exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed to build the control plane"; exit 1; }
mkdir -p "$out.partial"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
timed() {
  local name=$1; shift
  local start=$SECONDS
  log "building $name (a cold build takes many minutes on 2 cores)..."
  if ! (cd "$tools/$name" && go mod download >&2); then
    log "module download failed for $name: see the lines above for the module the proxy does not serve"
    return 1
  fi
  (cd "$tools/$name" && "$@") >&2 || return 1
  log "built $name in $((SECONDS - start)) s"
}

stamp="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  stamp+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=36 -X $pkg.gitTreeState=clean"
done
timed etcd go build -trimpath -ldflags "-s -w" -o "$out.partial/etcd" go.etcd.io/etcd/server/v3
timed kwok go build -trimpath -ldflags "-s -w" -o "$out.partial/kwok" sigs.k8s.io/kwok/cmd/kwok
kube_cmds=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
if ! timed kube go build -trimpath -ldflags "$stamp" -o "$out.partial/" "${kube_cmds[@]}"; then
  # The handbook's fallback pair when the proxy lacks a v1.36.3 module: v1.36.1 with v0.36.1.
  log "retrying kube with the fallback versions k8s.io/kubernetes v1.36.1 and staging v0.36.1"
  fallback=$(mktemp -d)
  cp "$tools/kube/go.mod" "$tools/kube/go.sum" "$fallback/"
  sed -i 's/ v1\.36\.3\b/ v1.36.1/g; s/ v0\.36\.3\b/ v0.36.1/g' "$fallback/go.mod"
  (cd "$fallback" && go mod tidy >&2)
  tools_fallback=$fallback
  start=$SECONDS
  (cd "$tools_fallback" && go build -trimpath -ldflags "${stamp//v1.36.3/v1.36.1}" -o "$out.partial/" "${kube_cmds[@]}") >&2 \
    || { log "the fallback failed too: see the lines above for the module the proxy does not serve"; exit 1; }
  log "built kube (fallback v1.36.1) in $((SECONDS - start)) s"
fi

kwok_dir=$(cd "$tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  printf -- '---\n# from sigs.k8s.io/kwok kustomize/stage/%s (Apache-2.0)\n' "$f"
  cat "$kwok_dir/kustomize/stage/$f"
done > "$out.partial/kwok-stages.yaml"

rm -rf "$out" && mv "$out.partial" "$out"
log "binaries ready in $out ($(du -sh "$out" | cut -f1))"
echo "$out"
