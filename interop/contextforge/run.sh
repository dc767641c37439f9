#!/usr/bin/env bash
# Run IBM ContextForge (mcp-contextforge-gateway) locally as a gateway in front of
# an existing Streamable HTTP MCP server, for latency benchmarks.
#
#   interop/contextforge/run.sh UPSTREAM_URL UPSTREAM_BEARER_TOKEN
#
# Prints exactly one line to stdout once the gateway can serve the upstream's tools:
#
#   CONTEXTFORGE_READY <mcp endpoint url> <bearer token> tool=<name of schema_version>
#
# then stays in the foreground until SIGTERM/SIGINT or until its stdin closes, and
# stops ContextForge (gunicorn master and workers) and removes its temp dir on exit.
# Everything else (install output, ContextForge logs) goes to stderr.
#
# Environment knobs (all optional):
#   CONTEXTFORGE_STATEFUL=1      stateful MCP sessions (USE_STATEFUL_SESSIONS=true): ContextForge
#                                then keeps one upstream session per client session instead of
#                                opening a new one per call; without Redis that needs a single
#                                worker, so this forces CONTEXTFORGE_WORKERS=1 (see README.md)
#   CONTEXTFORGE_WORKERS         gunicorn worker processes (default 2: one per core)
#   CONTEXTFORGE_START_TIMEOUT   seconds to wait for readiness (default 180)
#   CONTEXTFORGE_PORT            port to listen on (default: a free loopback port)
set -euo pipefail

# stdout is reserved for the READY line: keep it on fd 3, send everything else to stderr.
exec 3>&1 1>&2

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf 'contextforge/run.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ "$#" -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
  die "usage: $0 UPSTREAM_URL UPSTREAM_BEARER_TOKEN"
fi
UPSTREAM_URL="$1"
UPSTREAM_TOKEN="$2"
case "$UPSTREAM_URL" in
  http://* | https://*) ;;
  *) die "UPSTREAM_URL must be an http(s) URL of a Streamable HTTP MCP endpoint, got '$UPSTREAM_URL'" ;;
esac
WORKERS="${CONTEXTFORGE_WORKERS:-2}"
STATEFUL=false
if [ "${CONTEXTFORGE_STATEFUL:-0}" = 1 ]; then
  STATEFUL=true
  [ "$WORKERS" = 1 ] || log "CONTEXTFORGE_STATEFUL=1: using 1 worker (in-memory session store, no Redis)"
  WORKERS=1
fi
case "$WORKERS" in ''|*[!0-9]*|0) die "CONTEXTFORGE_WORKERS must be a positive integer" ;; esac
START_TIMEOUT="${CONTEXTFORGE_START_TIMEOUT:-180}"

# ---------------------------------------------------------------- venv (idempotent)
cd "$HERE"
if [ ! -x .venv/bin/python ] || [ requirements.txt -nt .venv/.install-stamp ]; then
  log "installing ContextForge into $HERE/.venv (one-off, ~1 min)"
  python3 -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))' \
    || die "ContextForge needs CPython 3.11-3.13 as python3, found $(python3 --version 2>&1)"
  python3 -m venv .venv || die "python3 -m venv failed"
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt \
    || die "pip install -r requirements.txt failed"
  touch .venv/.install-stamp
fi
PY="$HERE/.venv/bin/python"
[ -x "$HERE/.venv/bin/gunicorn" ] || die "gunicorn missing from .venv; delete $HERE/.venv and retry"

# ---------------------------------------------------------------- throwaway state
WORK="$(mktemp -d "${TMPDIR:-/tmp}/contextforge.XXXXXX")"
GUNICORN_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$GUNICORN_PID" ] && kill -0 "$GUNICORN_PID" 2>/dev/null; then
    # gunicorn runs in its own session/process group (setsid): TERM the master for a
    # graceful stop, then KILL whatever is left of the group.
    kill -TERM "$GUNICORN_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 -- "-$GUNICORN_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$GUNICORN_PID" 2>/dev/null || true
    wait "$GUNICORN_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'log "SIGINT, stopping ContextForge"; exit 130' INT
trap 'log "SIGTERM, stopping ContextForge"; exit 143' TERM

if [ -n "${CONTEXTFORGE_PORT:-}" ]; then
  PORT="$CONTEXTFORGE_PORT"
else
  PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
fi
BASE="http://127.0.0.1:$PORT"

# Fresh random secrets for every run.
rand() { "$PY" -c 'import secrets; print(secrets.token_urlsafe(48))'; }
ADMIN_EMAIL="admin@example.com"

# ContextForge reads its settings from the environment (and from ./.env, so run it
# from the empty temp dir to keep any stray .env out). It gets a clean environment
# (env -i) so that nothing from the caller's (DEBUG, RELOAD, *_PROXY, ...) leaks in.
# See README.md for why each is set.
env_vars=(
  PATH="$PATH"
  HOME="$WORK"
  LANG=C.UTF-8
  # where / what
  HOST=127.0.0.1
  PORT="$PORT"
  APP_DOMAIN="$BASE"
  ENVIRONMENT=production
  DATABASE_URL="sqlite:///$WORK/mcp.db"
  TMPDIR="$WORK"
  CACHE_TYPE=memory
  USE_STATEFUL_SESSIONS="$STATEFUL"
  LOG_LEVEL=WARNING
  # authentication ON: JWT bearer for API + MCP, basic-auth admin creds, platform admin
  AUTH_REQUIRED=true
  MCP_CLIENT_AUTH_ENABLED=true
  JWT_SECRET_KEY="$(rand)"
  AUTH_ENCRYPTION_SECRET="$(rand)"
  BASIC_AUTH_USER=admin
  BASIC_AUTH_PASSWORD="Aa1!$(rand)"
  PLATFORM_ADMIN_EMAIL="$ADMIN_EMAIL"
  PLATFORM_ADMIN_PASSWORD="Aa1!$(rand)"
  # the upstream lives on loopback, which the SSRF guard blocks by default
  SSRF_ALLOW_LOCALHOST=true
  # nothing that phones home or is not needed for an MCP gateway benchmark
  MCPGATEWAY_UI_ENABLED=false
  MCPGATEWAY_ADMIN_API_ENABLED=false
  MCPGATEWAY_CATALOG_ENABLED=false
  MCPGATEWAY_CATALOG_AUTO_HEALTH_CHECK=false
  LLMCHAT_ENABLED=false
  MCPGATEWAY_A2A_ENABLED=false
  OBSERVABILITY_ENABLED=false
  OTEL_ENABLE_OBSERVABILITY=false
  SSO_ENABLED=false
  SMTP_ENABLED=false
  WEBHOOK_LOGGING_ENABLED=false
  # the built-in limiter allows 100 req/min on /servers/*/mcp; without Redis it is a
  # per-worker in-memory list; a benchmark would only measure 429s
  RATE_LIMITING_ENABLED=false
  RATE_LIMITING_REDIS_ENABLED=false
)

cd "$WORK"

# ---------------------------------------------------------------- start
log "starting ContextForge $("$PY" -c 'import importlib.metadata as m; print(m.version("mcp-contextforge-gateway"))') on $BASE ($WORKERS workers, stateful sessions: $STATEFUL, db in $WORK)"
# Same shape as ContextForge's own run-gunicorn.sh / gunicorn.config.py (its production
# entry point): gunicorn + uvicorn workers, 600 s timeout, worker recycling, no access
# log. Not --preload: upstream pairs that with a post_fork hook (engine.dispose) that
# only lives in its repo's gunicorn.config.py, which the wheel does not ship.
# setsid: own process group, so cleanup can kill master + workers as a group.
# The python stub sets PR_SET_PDEATHSIG=SIGTERM before exec'ing gunicorn, so even a
# SIGKILL of this script (no trap runs) still stops ContextForge.
setsid env -i "${env_vars[@]}" "$PY" -c '
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit("contextforge/run.sh died before ContextForge started")
os.execv(sys.argv[2], sys.argv[2:])
' "$$" "$HERE/.venv/bin/gunicorn" \
  --worker-class uvicorn.workers.UvicornWorker \
  --workers "$WORKERS" \
  --bind "127.0.0.1:$PORT" \
  --timeout 600 \
  --max-requests 100000 --max-requests-jitter 100 \
  --access-logfile /dev/null --error-logfile - --log-level warning \
  --no-control-socket \
  mcpgateway.main:app </dev/null >&2 &
GUNICORN_PID=$!

deadline=$((SECONDS + START_TIMEOUT))
until curl -fsS --noproxy '*' -o /dev/null --max-time 2 "$BASE/health" 2>/dev/null; do
  kill -0 "$GUNICORN_PID" 2>/dev/null || die "ContextForge exited during startup (see its log above)"
  [ "$SECONDS" -lt "$deadline" ] || die "ContextForge not healthy on $BASE/health after ${START_TIMEOUT}s"
  sleep 0.5
done
log "ContextForge healthy after ${SECONDS}s"

# ---------------------------------------------------------------- token, registration
# An API token for the platform admin, in the form ContextForge's RBAC docs give for an
# "unrestricted admin-bypass API token" (explicit teams=null + is_admin=true). A plain
# `--username` token is treated as public-only: it works, but logs a warning per request.
# token_use=api: exempt from the 60-minute idle timeout of session tokens. Valid 7 days.
TOKEN="$(env -i "${env_vars[@]}" "$PY" -m mcpgateway.utils.create_jwt_token \
  --data "{\"sub\":\"$ADMIN_EMAIL\",\"is_admin\":true,\"teams\":null,\"token_use\":\"api\"}" \
  --exp 10080 | tail -n 1)" \
  || die "create_jwt_token failed"
[ -n "$TOKEN" ] || die "create_jwt_token printed no token"

READY_LINE="$(
  CF_BASE="$BASE" CF_TOKEN="$TOKEN" UPSTREAM_URL="$UPSTREAM_URL" UPSTREAM_TOKEN="$UPSTREAM_TOKEN" \
  "$PY" - <<'PYEOF'
import asyncio, os, sys

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

base, token = os.environ["CF_BASE"], os.environ["CF_TOKEN"]
auth = {"Authorization": f"Bearer {token}"}
WANTED = "schema_version"


def fail(msg):
    print(f"contextforge/run.sh: error: {msg}", file=sys.stderr)
    sys.exit(1)


def check(r, what):
    if r.status_code >= 300:
        fail(f"{what}: HTTP {r.status_code}: {r.text[:2000]}")
    return r.json()


with httpx.Client(base_url=base, headers=auth, timeout=60, trust_env=False) as c:
    # 1. register the upstream as a ContextForge gateway (Streamable HTTP, bearer auth).
    gw = check(
        c.post(
            "/gateways",
            json={
                "name": "upstream",
                "url": os.environ["UPSTREAM_URL"],
                "transport": "STREAMABLEHTTP",
                "auth_type": "bearer",
                "auth_token": os.environ["UPSTREAM_TOKEN"],
                "visibility": "public",
            },
        ),
        "registering the upstream (POST /gateways)",
    )
    gw_id = gw["id"]
    # 2. the tools ContextForge discovered on it.
    tools = check(c.get("/tools", params={"gateway_id": gw_id, "limit": 0}), "listing tools (GET /tools)")
    if isinstance(tools, dict):
        tools = tools.get("items") or tools.get("data") or tools.get("tools") or []
    tools = [t for t in tools if t.get("gatewayId", t.get("gateway_id")) in (None, gw_id)]
    if not tools:
        fail(f"ContextForge discovered no tools on {os.environ['UPSTREAM_URL']}")
    # 3. a virtual server exposing them: that is what gets an MCP endpoint.
    srv = check(
        c.post(
            "/servers",
            json={"server": {"name": "bench", "description": "benchmark upstream", "associated_tools": [t["id"] for t in tools], "visibility": "public"}},
        ),
        "creating the virtual server (POST /servers)",
    )
    srv_id = srv["id"]

url = f"{base}/servers/{srv_id}/mcp"
orig = {t["name"]: t.get("originalName") or t.get("original_name") for t in tools}


# 4. ask ContextForge's own MCP endpoint what the tool is called there.
async def mcp_names():
    client = httpx.AsyncClient(headers=auth, timeout=30, trust_env=False)
    async with client, streamable_http_client(url, http_client=client) as (r, w, _):
        async with ClientSession(r, w) as s:
            await s.initialize()
            return [t.name for t in (await s.list_tools()).tools]


names = asyncio.run(mcp_names())
match = [n for n in names if orig.get(n) == WANTED] or [n for n in names if n == WANTED or n.endswith(WANTED.replace("_", "-"))]
if len(match) != 1:
    fail(f"cannot tell which tool is the upstream's {WANTED!r}: MCP tools/list gave {names}, REST gave {orig}")
print(f"CONTEXTFORGE_READY {url} {token} tool={match[0]}")
PYEOF
)" || die "could not register the upstream with ContextForge"

log "ready after ${SECONDS}s total"
printf '%s\n' "$READY_LINE" >&3
exec 3>&-

# ---------------------------------------------------------------- run until told to stop
# Wait for stdin EOF (read returns 1) or a signal; poll gunicorn once a second.
while :; do
  rc=0
  read -r -t 1 _ || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -le 128 ]; then
    log "stdin closed, stopping ContextForge"
    break
  fi
  kill -0 "$GUNICORN_PID" 2>/dev/null || die "ContextForge exited unexpectedly"
done
exit 0
