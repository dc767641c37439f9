#!/usr/bin/env bash
# Runs the web UI's browser tests: installs Debian's Chromium if it is missing (never a downloaded
# browser), installs playwright-core from package-lock.json, builds the switchboard binary, installs
# the interop peers the tests start (server-everything, the MCP Apps example servers), then runs every *.test.js with node's test
# runner. Screenshots land in artifacts/screenshots/ at the repository root.
set -euo pipefail
cd "$(dirname "$0")"
repository_root="$(cd ../.. && pwd)"

if [ ! -x /usr/bin/chromium ]; then
  echo "browser tests: installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi

if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.install-stamp ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules/.install-stamp
fi

if [ ! -f "$repository_root/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] \
  || [ ! -f "$repository_root/interop/apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js" ] \
  || [ ! -f "$repository_root/interop/apps/node_modules/@modelcontextprotocol/server-system-monitor/dist/index.js" ]; then
  bash "$repository_root/interop/install.sh"
fi

if [ -z "${SWITCHBOARD_BIN:-}" ]; then
  (cd "$repository_root" && cargo build --quiet -p switchboard)
fi
if [ -z "${SWITCHBOARD_TASK_FIXTURE:-}" ]; then
  # tasks.test.js's MCP server whose tool answers with a task (crates/test-support).
  (cd "$repository_root" && cargo build --quiet -p switchboard-test-support --bin task-fixture)
fi

node --test --test-concurrency=1 "$@"
