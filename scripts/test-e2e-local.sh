#!/usr/bin/env bash
# The e2e suite (npm run test:e2e) proven on a cluster it only reaches through a kubeconfig: the
# local one `poolrelay cluster up --profile node` starts (a real node and Knative, without the
# product), with the images built here; stopped again at the end. Arguments go to vitest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
log=$(mktemp)
node bin/poolrelay.js cluster up --profile node >"$log.out" 2>"$log"
if grep -q "already running" "$log"; then
  echo "test-e2e-local: a control plane is already running (poolrelay cluster down stops it); this run starts and stops its own" >&2
  exit 1
fi
trap 'node bin/poolrelay.js cluster down' EXIT
kubeconfig=$(sed -n 's/^kubeconfig: //p' "$log.out")
kubectl="$(bash scripts/control-plane-build.sh kube | tail -n 1)/kubectl"
echo "test-e2e-local: cluster up ($(tail -n 1 "$log")); KUBECONFIG=$kubeconfig"
KUBECONFIG=$kubeconfig KUBECTL=$kubectl \
  POOLRELAY_IMAGE=dev.local/dynamo-pool-relay:local POOLRELAY_RELAY_IMAGE=dev.local/dynamo-relay:1.6.1 \
  npx vitest run --config vitest.e2e.config.ts "$@"
