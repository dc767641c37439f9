// server-status: reads a server's state from the registry's answer into a dot colour and words a
// user understands. Colour is never the only signal: the words are always shown beside the dot.

import { h } from '../../lib/dom.js';

const GREEN = new Set(['active', 'connected', 'ok', 'ready', 'up', 'healthy', 'synced']);
const YELLOW = new Set(['initializing', 'connecting', 'starting', 'syncing', 'slow', 'stale', 'degraded', 'retrying']);
const RED = new Set(['error', 'failed', 'needs_auth', 'unauthorized', 'down', 'unreachable']);

/** `{colour: green|yellow|red|grey, label}` for a server record. */
export function describeServerStatus(server) {
  if (server?.is_active === false) return { colour: 'grey', label: 'Disabled' };
  const state = String(server?.status ?? server?.state ?? server?.session_state ?? '').toLowerCase();
  const sync = String(server?.sync_status ?? '').toLowerCase();
  if (RED.has(state) || RED.has(sync)) {
    if (sync === 'needs_auth' || state === 'needs_auth') return { colour: 'red', label: 'Needs credentials' };
    if (!RED.has(state) && sync === 'failed') return { colour: 'red', label: 'Tool sync failed' };
    return { colour: 'red', label: 'Error' };
  }
  if (YELLOW.has(state)) return { colour: 'yellow', label: state === 'initializing' || state === 'connecting' ? 'Connecting…' : capitalise(state) };
  if (GREEN.has(state)) {
    if (sync === 'empty') return { colour: 'yellow', label: 'Connected — lists no tools' };
    if (sync === 'stale') return { colour: 'yellow', label: 'Connected — tool list out of date' };
    return { colour: 'green', label: 'Connected' };
  }
  if (sync === 'empty') return { colour: 'yellow', label: 'Lists no tools' };
  if (sync === 'stale') return { colour: 'yellow', label: 'Tool list out of date' };
  if (GREEN.has(sync)) return { colour: 'green', label: 'Synced' };
  if (state === 'closed') return { colour: 'grey', label: 'Closed' };
  if (state === 'disconnected') return { colour: 'grey', label: 'Not connected — connects on first use' };
  return { colour: 'grey', label: state === 'idle' ? 'Idle — connects on first use' : 'Not connected yet' };
}

/** The dot and its words. */
export function renderStatus(server) {
  const { colour, label } = describeServerStatus(server);
  return h('span', { class: 'row server-status', dataset: { status: colour } },
    h('span', { class: 'status-dot', dataset: { status: colour }, 'aria-hidden': 'true' }),
    h('span', { class: 'status-label', text: label }));
}

/** Human name of a transport id. */
export function transportName(transport) {
  return { stdio: 'Local command (stdio)', streamable_http: 'Streamable HTTP', sse: 'HTTP + SSE (legacy)', websocket: 'WebSocket' }[transport] ?? transport ?? 'unknown';
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1).replace(/_/g, ' ');
}
