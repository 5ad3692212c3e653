#!/usr/bin/env bash
# npm test: type-check, then every test (unit, and integration on a real local control plane with
# the real Knative Eventing, which the test run builds from Go modules if needed and starts).
# Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
npx tsc --noEmit
npx vitest run "$@"
