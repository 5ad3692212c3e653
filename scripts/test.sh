#!/usr/bin/env bash
# npm test: type-check, then every test (unit, and integration on a real local control plane with
# the real Knative Eventing, which the test run builds from Go modules if needed and starts), then
# the fault suite on a control plane of its own, then the signal tests of `npm start` (each starts
# its own), then the real-node suite (a real kubelet, containerd and runc running the product's
# image built with buildah; root). With arguments, one vitest run with them (npm run test:faults passes the fault suite's
# config). VITEST_REPORT_DIR=DIR adds a JSON report per run (DIR/main.json, DIR/faults.json,
# DIR/start.json, DIR/node.json), which CI counts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
npx tsc --noEmit
report() { [ -n "${VITEST_REPORT_DIR:-}" ] && echo "--reporter=default --reporter=json --outputFile.json=$VITEST_REPORT_DIR/$1.json" || true; }
if [ $# -gt 0 ]; then
  exec npx vitest run "$@"
fi
status=0
# shellcheck disable=SC2046
npx vitest run $(report main) || status=$?
# shellcheck disable=SC2046
npx vitest run --config vitest.faults.config.ts $(report faults) || status=$?
# shellcheck disable=SC2046
npx vitest run --config vitest.start.config.ts $(report start) || status=$?
# The real node: Debian packages when missing, then its programs and images (built on first use).
# shellcheck disable=SC2046
{ bash scripts/host-packages.sh && npx vitest run --config vitest.node.config.ts $(report node); } || status=$?
exit $status
