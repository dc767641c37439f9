// upstream-errors: plain-words explanations of the MCP client's stable error codes, shown first,
// followed by the client's own message (what, where, why: "it exited with status 3; its last
// stderr line: …") when it is short enough to read; longer messages go under "Details".

import { h } from './dom.js';

const EXPLANATIONS = {
  needs_auth: 'The server asks for credentials, or refused the ones configured. Check its API key or headers.',
  needs_user_credentials: 'This server needs your own credentials: fill them in under “Your credentials” on its card.',
  connect_failed: 'Could not connect to the server. Check the address and that the server is running.',
  connection_lost: 'The connection to the server broke during the call.',
  init_failed: 'The server did not complete the MCP handshake.',
  init_timeout: 'The server did not finish the MCP handshake in time.',
  timeout: 'The server took too long to answer.',
  spawn_failed: 'The command could not be started. Check the program name and its arguments.',
  url_policy: 'This address is not allowed (private, loopback or metadata addresses are blocked unless configured).',
  response_too_large: 'The server sent an answer larger than the allowed size.',
  protocol_error: 'The server sent something that is not valid MCP.',
  server_unavailable: 'The server is not available right now.',
  unknown_tool: 'The server does not offer this tool (any more).',
  invalid_arguments: 'The arguments do not match what the tool expects.',
  invalid_config: 'The server\'s configuration is not valid.',
  busy: 'Too many calls are running on this server; try again in a moment.',
  upstream_error: 'The server reported an error.',
  cancelled: 'The call was cancelled.',
  shutting_down: 'Switchboard is shutting down.',
};

/** The plain sentence for an error code, or null when the code is unknown. */
export function explainUpstreamError(code) {
  return EXPLANATIONS[code] ?? null;
}

/** Longest message shown inline after the explanation; longer ones are folded under "Details". */
const INLINE_MESSAGE_LIMIT = 240;

/** The explanation, then the message itself (inline when short, else in a collapsible "Details"). */
export function renderUpstreamError(code, message, { prefix = '' } = {}) {
  const plain = explainUpstreamError(code);
  if (!plain) return h('span', { text: `${prefix}${message ?? 'unknown error'}` });
  const text = String(message ?? '').trim();
  if (!text) return h('span', { text: `${prefix}${plain}` });
  if (text.length <= INLINE_MESSAGE_LIMIT && !text.includes('\n')) {
    return h('span', {}, `${prefix}${plain} `, h('span', { class: 'upstream-message', text: capitalise(text.replace(/\.$/, '')) + '.' }));
  }
  return h('span', {}, `${prefix}${plain} `,
    h('details', { class: 'inline-details' }, h('summary', { text: 'Details' }), h('span', { class: 'mono', text })));
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
