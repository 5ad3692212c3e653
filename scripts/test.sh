#!/usr/bin/env bash
# shellcheck disable=SC2046 # report's words are vitest's arguments
# npm test: type-check and lint (typescript-eslint's type-checked rules, prettier's check), then
# every test: unit, and integration on a local control plane with a real node, Knative Serving and
# Eventing as pods and the product's image built with buildah (all built from Go modules and Debian
# packages if needed and started by the run; root); the fault suite on a control plane of its own;
# the tests of `npm start` (each starts its own); the real-node suite (the image, scale to zero, the
# real Relay); the e2e suite on a cluster it reaches only through the kubeconfig of `poolrelay
# cluster up --profile node`. With arguments, one vitest run with them, no lint (npm run
# test:faults passes the fault suite's config). VITEST_REPORT_DIR=DIR adds a JSON report per run
# (DIR/unit.json, main.json for integration, faults.json, start.json, node.json, e2e.json), which
# CI counts.
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
bash scripts/host-packages.sh
# suite NAME: one suite, with its JSON report; chain NAME...: each in turn, failing if any failed.
suite() {
  case $1 in
    unit) npx vitest run --project unit $(report unit) ;;
    main) npx vitest run --project integration $(report main) ;;
    e2e) bash scripts/test-e2e-local.sh $(report e2e) ;;
    *) npx vitest run --config "vitest.$1.config.ts" $(report "$1") ;;
  esac
}
chain() {
  local failed=0
  for name in "$@"; do suite "$name" || failed=$?; done
  return $failed
}
# One suite after another unless POOLRELAY_TEST_LANES=3: in lanes the load made a timing-bound
# test fail in 3 of 5 whole runs (bench/HISTORY.md); none of the last three runs one after another
# failed that way.
if [ "${POOLRELAY_TEST_LANES:-1}" != 3 ]; then
  failed=0
  chain unit main faults start node e2e || failed=$?
  exit $failed
fi
# Three lanes at once, each a chain of suites on clusters of their own: the suites mostly wait on
# real clusters (one after another they kept this 2-core machine 40% busy), so the run takes as
# long as its longest lane. Each lane writes to its own log, printed whole when all are done; job
# control (set -m) gives each lane a process group, which an interrupt here is passed on to.
# Clusters start one at a time, each once the one before is up (or after 5 minutes): three nodes
# importing their images at once took one from 1.5 to 6 minutes, and unit tests run beside that
# timed out. The unit tests run alone beside the first cluster's start.
set -m
logs=$(mktemp -d)
lanes=()
lane() { "$@" >"$logs/${#lanes[@]}.log" 2>&1 & lanes+=($!); }
trap 'for p in "${lanes[@]}"; do kill -INT -- "-$p" 2>/dev/null || true; done; echo "interrupted; the logs of the lanes are in $logs" >&2; exit 130' INT TERM
# up N: waits until lane N's cluster is up or the lane has ended.
up() {
  for _ in $(seq 150); do
    grep -qs "Knative and the product Ready" "$logs/$1.log" || ! kill -0 "${lanes[$1]}" 2>/dev/null && return
    sleep 2
  done
}
status=0
lane chain main
lane chain unit
wait "${lanes[1]}" || status=$?
cat "$logs/1.log"
up 0
lane chain faults start
up 2
lane chain node e2e
for i in 0 2 3; do
  wait "${lanes[$i]}" || status=$?
  cat "$logs/$i.log"
done
rm -rf "$logs"
exit $status
