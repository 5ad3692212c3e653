# Sourced: puts a Node >= 22.20 first on PATH, installing Node 22 LTS from the npm registry (the
# `node` package) into .tools/ when the machine's Node is older or missing.
_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_node_ok() { node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=20)?0:1)' 2>/dev/null; }
if ! _node_ok; then
  _bin="$_root/.tools/node22/node_modules/node/bin"
  if [ ! -x "$_bin/node" ]; then
    echo "[use-node] installing Node 22 from the npm registry into .tools/node22" >&2
    npm install --prefix "$_root/.tools/node22" --no-save --no-audit --no-fund --loglevel=error node@22 >&2
  fi
  export PATH="$_bin:$PATH"
  _node_ok || { echo "[use-node] could not get Node >= 22.20" >&2; return 1; }
fi
unset _root _bin
