#!/usr/bin/env bash
# Runs a command with Node >= 22.20 first on PATH (installed from the npm registry into .tools/
# when the machine's Node is older), so `npm start` and `npm test` work on a machine with Node 20.
set -euo pipefail
# shellcheck source=use-node.sh
source "$(dirname "${BASH_SOURCE[0]}")/use-node.sh"
exec "$@"
