// server-status: reads a server's state from the registry's answer into a dot colour and words a
// user understands. Colour is never the only signal: the words are always shown beside the dot.

import { h } from '../../lib/dom.js';

const GREEN = new Set(['active', 'connected', 'ok', 'ready', 'up', 'healthy', 'synced']);
const YELLOW = new Set(['initializing', 'connecting', 'starting', 'slow', 'degraded', 'retrying']);
const RED = new Set(['error', 'failed', 'needs_auth', 'unauthorized', 'down', 'unreachable']);

/**
 * `{colour: green|yellow|red|grey, label, detail}` for a server record. `detail` (the tooltip) gives
 * the latency figures when the registry has any, else it is empty.
 */
export function describeServerStatus(server) {
  const shown = statusColourAndLabel(server);
  return { ...shown, detail: describeLatency(server?.latency) };
}

function statusColourAndLabel(server) {
  if (server?.is_active === false) return { colour: 'grey', label: 'Disabled' };
  if (server?.auth?.mode === 'oauth' && server.auth.connected !== true) return { colour: 'yellow', label: 'Needs sign-in' };
  const state = String(server?.status ?? '').toLowerCase();
  const sync = String(server?.sync_status ?? '').toLowerCase();
  if (sync === 'needs_auth' || state === 'needs_auth') return { colour: 'red', label: 'Needs credentials' };
  if (RED.has(state)) return { colour: 'red', label: 'Error' };
  if (sync === 'error' || sync === 'failed') return { colour: 'red', label: 'Tool sync failed' };
  if (YELLOW.has(state)) return { colour: 'yellow', label: 'Connecting…' };
  if (sync === 'syncing') return { colour: 'yellow', label: 'Syncing tools…' };
  if (server?.slow === true) return { colour: 'yellow', label: slowLabel(server) };
  if (sync === 'empty') return { colour: 'yellow', label: GREEN.has(state) ? 'Connected — lists no tools' : 'Lists no tools' };
  if (sync === 'stale') return { colour: 'yellow', label: GREEN.has(state) ? 'Connected — tool list out of date' : 'Tool list out of date' };
  if (GREEN.has(state)) return { colour: 'green', label: 'Connected' };
  if (GREEN.has(sync)) return { colour: 'green', label: 'Ready — connects on first use' };
  if (state === 'closed') return { colour: 'grey', label: 'Closed' };
  return { colour: 'grey', label: 'Not connected yet' };
}

/** "35 ms", "2.4 s", "12 s" from milliseconds. */
export function formatSeconds(milliseconds) {
  const value = Number(milliseconds);
  if (value < 1000) return `${Math.round(value)} ms`;
  const seconds = value / 1000;
  return seconds >= 10 ? `${Math.round(seconds)} s` : `${seconds.toFixed(1)} s`;
}

// Why the registry calls the server slow (`slow_reason`), in words, with its typical figure.
function slowLabel(server) {
  const latency = server.latency ?? {};
  if (server.slow_reason === 'start' && Number.isFinite(latency.last_start_ms)) {
    return `Slow — starting took ${formatSeconds(latency.last_start_ms)}`;
  }
  if (Number.isFinite(latency.recent_p50_ms)) return `Slow — recent calls take about ${formatSeconds(latency.recent_p50_ms)}`;
  return 'Slow to answer';
}

/** The latency figures as a sentence or two for the tooltip; '' when nothing was measured. */
export function describeLatency(latency) {
  if (!latency) return '';
  const parts = [];
  if (latency.samples > 0 && Number.isFinite(latency.recent_p50_ms)) {
    const requests = latency.samples === 1 ? '1 request' : `${latency.samples} requests`;
    parts.push(`Last ${requests}: typically ${formatSeconds(latency.recent_p50_ms)}, slowest ${formatSeconds(latency.recent_max_ms)}.`);
  }
  if (Number.isFinite(latency.last_start_ms)) parts.push(`Last start took ${formatSeconds(latency.last_start_ms)}.`);
  return parts.join(' ');
}

/** The dot and its words; the latency figures as its tooltip. */
export function renderStatus(server) {
  const { colour, label, detail } = describeServerStatus(server);
  return h('span', { class: 'row server-status', dataset: { status: colour }, title: detail || null },
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
