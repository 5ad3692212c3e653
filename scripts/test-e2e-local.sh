#!/usr/bin/env bash
# The e2e suite (npm run test:e2e) proven on a cluster it only reaches through a kubeconfig: the
# local one `poolrelay cluster up --profile node` starts (a real node and Knative, without the
# product), with the images built here, the latest release's among them; stopped again at the end.
# Arguments go to vitest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
# Its own state file (the built binaries and images stay in the usual cache), so that its
# `cluster down` stops the cluster it started and never one of yours.
export POOLRELAY_CACHE_DIR=${POOLRELAY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-pool-relay}
XDG_CACHE_HOME=$(mktemp -d)
export XDG_CACHE_HOME
log="$XDG_CACHE_HOME/up"
trap 'node bin/poolrelay.js cluster down; rm -rf "$XDG_CACHE_HOME"' EXIT
# The upgrade starts from the latest release (the newest v* tag before HEAD, or
# POOLRELAY_UPGRADE_FROM_REF): its knative/, and its image, which the cluster's node imports with
# the others (scripts/images-build.sh, POOLRELAY_PRODUCT_AT). A clone made without tags or history
# (git clone --depth 1, --no-tags) fetches them from its origin first; with no release to be found
# the suite runs without the upgrade, and its upgrade test reports itself skipped.
latest_release() { git describe --tags --abbrev=0 --match 'v*' 2>/dev/null; }
from=${POOLRELAY_UPGRADE_FROM_REF:-$(latest_release)} || {
  unshallow=$([ "$(git rev-parse --is-shallow-repository)" = true ] && echo --unshallow || true)
  timeout 120 git fetch --quiet --tags $unshallow origin 2>/dev/null || true
  from=$(latest_release) || from=
}
upgrade=()
if [ -n "$from" ]; then
  from_commit=$(git rev-parse --verify "$from^{commit}")
  mkdir -p "$XDG_CACHE_HOME/from" && git archive "$from_commit" knative crds | tar -x -C "$XDG_CACHE_HOME/from"
  export POOLRELAY_PRODUCT_AT=$from_commit
  upgrade=(POOLRELAY_UPGRADE_FROM="$XDG_CACHE_HOME/from/knative" POOLRELAY_UPGRADE_FROM_IMAGE="dev.local/dynamo-pool-relay:at-${from_commit:0:12}")
else
  echo "test-e2e-local: no v* tag here or at origin: no upgrade (set POOLRELAY_UPGRADE_FROM_REF to an earlier release)" >&2
fi
node bin/poolrelay.js cluster up --profile node >"$log.out" 2>"$log" || { cat "$log" >&2; exit 1; }
kubeconfig=$(sed -n 's/^kubeconfig: //p' "$log.out")
kubectl="$(bash scripts/control-plane-build.sh kube | tail -n 1)/kubectl"
echo "test-e2e-local: cluster up ($(tail -n 1 "$log")); KUBECONFIG=$kubeconfig; upgrading from ${from:-nothing}"
env KUBECONFIG="$kubeconfig" KUBECTL="$kubectl" \
  POOLRELAY_IMAGE=dev.local/dynamo-pool-relay:local POOLRELAY_RELAY_IMAGE=dev.local/dynamo-relay:1.6.1 \
  "${upgrade[@]}" npx vitest run --config vitest.e2e.config.ts "$@"
