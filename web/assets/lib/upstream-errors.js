// upstream-errors: plain-words explanations of the MCP client's stable error codes, shown first;
// the upstream's own (often technical) message stays available under "Details".

import { h } from './dom.js';

const EXPLANATIONS = {
  needs_auth: 'The server asks for credentials, or refused the ones configured. Check its API key or headers.',
  connect_failed: 'Could not connect to the server. Check the address and that the server is running.',
  connection_lost: 'The connection to the server broke during the call.',
  init_failed: 'The server answered but the MCP handshake failed.',
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

/** The explanation (or the message alone) with the raw message in a collapsible "Details". */
export function renderUpstreamError(code, message, { prefix = '' } = {}) {
  const plain = explainUpstreamError(code);
  if (!plain) return h('span', { text: `${prefix}${message ?? 'unknown error'}` });
  return h('span', {}, `${prefix}${plain} `,
    message ? h('details', { class: 'inline-details' }, h('summary', { text: 'Details' }), h('span', { class: 'mono', text: message })) : null);
}
