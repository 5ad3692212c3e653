#!/usr/bin/env bash
# npm test: type-check and lint (typescript-eslint's type-checked rules, prettier's check), then
# every test: unit, and integration on a local control plane with a real node, Knative Serving and
# Eventing as pods and the product's image built with buildah (all built from Go modules and Debian
# packages if needed and started by the run; root); the fault suite on a control plane of its own;
# the tests of `npm start` (each starts its own); the real-node suite (the image, scale to zero, the
# real Relay); the e2e suite on a cluster it reaches only through the kubeconfig of `poolrelay
# cluster up --profile node`. With arguments, one vitest run with them, no lint (npm run
# test:faults passes the fault suite's config). VITEST_REPORT_DIR=DIR adds a JSON report per run
# (DIR/main.json, faults.json, start.json, node.json, e2e.json), which CI counts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
npx tsc --noEmit
if [ $# -eq 0 ]; then
  npx eslint .
  npx prettier --check .
fi
report() { [ -n "${VITEST_REPORT_DIR:-}" ] && echo "--reporter=default --reporter=json --outputFile.json=$VITEST_REPORT_DIR/$1.json" || true; }
if [ $# -gt 0 ]; then
  exec npx vitest run "$@"
fi
status=0
# shellcheck disable=SC2046
{ bash scripts/host-packages.sh && npx vitest run $(report main); } || status=$?
# shellcheck disable=SC2046
npx vitest run --config vitest.faults.config.ts $(report faults) || status=$?
# shellcheck disable=SC2046
npx vitest run --config vitest.start.config.ts $(report start) || status=$?
# shellcheck disable=SC2046
npx vitest run --config vitest.node.config.ts $(report node) || status=$?
# shellcheck disable=SC2046
bash scripts/test-e2e-local.sh $(report e2e) || status=$?
exit $status
