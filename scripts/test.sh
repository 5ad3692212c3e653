#!/usr/bin/env bash
# npm test: type-check, then every test (unit, and integration on a real local control plane that
# the test run builds if needed and starts). Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=use-node.sh
source scripts/use-node.sh
# The Knative CRDs the manifest tests validate against; the team handbook beside the project has them.
if [ -z "${KNATIVE_CRDS_DIR:-}" ] && [ -d ../shared/reference/crds/knative ]; then
  KNATIVE_CRDS_DIR=$(cd ../shared/reference/crds/knative && pwd)
  export KNATIVE_CRDS_DIR
fi
npx tsc --noEmit
npx vitest run "$@"
