#!/usr/bin/env bash
# The e2e suite (npm run test:e2e) proven on a cluster it only reaches through a kubeconfig: the
# local one `poolrelay cluster up --profile node` starts (a real node and Knative, without the
# product), with the images built here; stopped again at the end. Arguments go to vitest.
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
node bin/poolrelay.js cluster up --profile node >"$log.out" 2>"$log" || { cat "$log" >&2; exit 1; }
kubeconfig=$(sed -n 's/^kubeconfig: //p' "$log.out")
kubectl="$(bash scripts/control-plane-build.sh kube | tail -n 1)/kubectl"
echo "test-e2e-local: cluster up ($(tail -n 1 "$log")); KUBECONFIG=$kubeconfig"
KUBECONFIG=$kubeconfig KUBECTL=$kubectl \
  POOLRELAY_IMAGE=dev.local/dynamo-pool-relay:local POOLRELAY_RELAY_IMAGE=dev.local/dynamo-relay:1.6.1 \
  npx vitest run --config vitest.e2e.config.ts "$@"
