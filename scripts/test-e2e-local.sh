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
# the others (scripts/images-build.sh, POOLRELAY_PRODUCT_AT).
from=${POOLRELAY_UPGRADE_FROM_REF:-$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null)} ||
  { echo "test-e2e-local: no v* tag to upgrade from (a shallow clone?): set POOLRELAY_UPGRADE_FROM_REF" >&2; exit 1; }
from_commit=$(git rev-parse --verify "$from^{commit}")
mkdir -p "$XDG_CACHE_HOME/from" && git archive "$from_commit" knative crds | tar -x -C "$XDG_CACHE_HOME/from"
export POOLRELAY_PRODUCT_AT=$from_commit
node bin/poolrelay.js cluster up --profile node >"$log.out" 2>"$log" || { cat "$log" >&2; exit 1; }
kubeconfig=$(sed -n 's/^kubeconfig: //p' "$log.out")
kubectl="$(bash scripts/control-plane-build.sh kube | tail -n 1)/kubectl"
echo "test-e2e-local: cluster up ($(tail -n 1 "$log")); KUBECONFIG=$kubeconfig; upgrading from $from"
KUBECONFIG=$kubeconfig KUBECTL=$kubectl \
  POOLRELAY_IMAGE=dev.local/dynamo-pool-relay:local POOLRELAY_RELAY_IMAGE=dev.local/dynamo-relay:1.6.1 \
  POOLRELAY_UPGRADE_FROM="$XDG_CACHE_HOME/from/knative" POOLRELAY_UPGRADE_FROM_IMAGE="dev.local/dynamo-pool-relay:at-${from_commit:0:12}" \
  npx vitest run --config vitest.e2e.config.ts "$@"
