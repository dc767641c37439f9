// server-status: reads a server's state from the registry's answer into a dot colour and words a
// user understands. Colour is never the only signal: the words are always shown beside the dot.

import { h } from '../../lib/dom.js';

const GREEN = new Set(['active', 'connected', 'ok', 'ready', 'up', 'healthy', 'synced']);
const YELLOW = new Set(['initializing', 'connecting', 'starting', 'slow', 'degraded', 'retrying']);
const RED = new Set(['error', 'failed', 'needs_auth', 'unauthorized', 'down', 'unreachable']);

/** `{colour: green|yellow|red|grey, label}` for a server record. */
export function describeServerStatus(server) {
  if (server?.is_active === false) return { colour: 'grey', label: 'Disabled' };
  const state = String(server?.status ?? server?.state ?? '').toLowerCase();
  const sync = String(server?.sync_status ?? '').toLowerCase();
  if (sync === 'needs_auth' || state === 'needs_auth') return { colour: 'red', label: 'Needs credentials' };
  if (RED.has(state)) return { colour: 'red', label: 'Error' };
  if (sync === 'error' || sync === 'failed') return { colour: 'red', label: 'Tool sync failed' };
  if (YELLOW.has(state)) return { colour: 'yellow', label: 'Connecting…' };
  if (sync === 'syncing') return { colour: 'yellow', label: 'Syncing tools…' };
  if (sync === 'empty') return { colour: 'yellow', label: GREEN.has(state) ? 'Connected — lists no tools' : 'Lists no tools' };
  if (sync === 'stale') return { colour: 'yellow', label: GREEN.has(state) ? 'Connected — tool list out of date' : 'Tool list out of date' };
  if (GREEN.has(state)) return { colour: 'green', label: 'Connected' };
  if (GREEN.has(sync)) return { colour: 'green', label: 'Ready — connects on first use' };
  if (state === 'closed') return { colour: 'grey', label: 'Closed' };
  return { colour: 'grey', label: 'Not connected yet' };
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
