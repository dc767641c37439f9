#!/usr/bin/env bash
# Installs the interop peers the tests drive: npm packages (pinned in package-lock.json) into
# interop/node_modules and the Python MCP SDK into interop/.venv. Idempotent and quick when
# nothing changed.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.install-stamp ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules/.install-stamp
fi

# The conformance suite's newer alpha (2026-07-28 scenarios) lives in its own folder so both
# versions can be run side by side.
if [ ! -d conformance-next/node_modules ] || [ conformance-next/package-lock.json -nt conformance-next/node_modules/.install-stamp ]; then
  (cd conformance-next && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.install-stamp)
fi

# The MCP Apps example servers (SDK 2.x) in their own folder, like conformance-next.
if [ ! -d apps/node_modules ] || [ apps/package-lock.json -nt apps/node_modules/.install-stamp ]; then
  (cd apps && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.install-stamp)
fi

if [ ! -x .venv/bin/python ] || [ requirements.txt -nt .venv/.install-stamp ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  touch .venv/.install-stamp
fi

# The Python SDK 2.x (stateless 2026-07-28 servers, `subscriptions/listen`) beside 1.x.
if [ ! -x .venv-mcp2/bin/python ] || [ requirements-mcp2.txt -nt .venv-mcp2/.install-stamp ]; then
  python3 -m venv .venv-mcp2
  .venv-mcp2/bin/pip install --quiet --disable-pip-version-check -r requirements-mcp2.txt
  touch .venv-mcp2/.install-stamp
fi
