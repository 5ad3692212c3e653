#!/usr/bin/env bash
# The Debian packages the real node and its images need on this machine, installed with apt when
# one is missing (root only; the node needs root anyway): buildah and mmdebstrap build the images;
# gcc, pkg-config, libseccomp-dev and libc6-dev build runc and pause; nftables (kube-proxy), iptables (the CNI
# portmap plugin) and conntrack (kube-proxy) run the pod network. A machine that has them all
# installs nothing.
set -euo pipefail
log() { printf '[host-packages] %s\n' "$*" >&2; }
declare -A needs=([buildah]=buildah [mmdebstrap]=mmdebstrap [gcc]=gcc [pkg-config]=pkg-config [nft]=nftables [iptables]=iptables [conntrack]=conntrack [ip]=iproute2 [unshare]=util-linux [nsenter]=util-linux)
missing=()
for cmd in "${!needs[@]}"; do command -v "$cmd" >/dev/null || missing+=("${needs[$cmd]}"); done
pkg-config --exists libseccomp 2>/dev/null || missing+=(libseccomp-dev)
# gcc -static (pause) links libc.a, which gcc only recommends.
dpkg -s libc6-dev >/dev/null 2>&1 || missing+=(libc6-dev)
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ]; then
  log "missing Debian packages: ${missing[*]}; the real node needs root, and root to install them (apt-get install ${missing[*]})"
  exit 1
fi
log "installing ${missing[*]} (apt)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
