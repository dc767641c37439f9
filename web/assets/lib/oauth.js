// oauth: connecting the signed-in person's account to an MCP server that uses OAuth. Connect asks
// the API to start the flow (`POST /api/mcp/servers/{id}/oauth/authorize`) and sends the window to
// the authorization server; Switchboard's callback sends it back to the servers page with the
// result in the hash query (`#/servers?oauth=connected&server=NAME` or `oauth=error&reason=…`).

import { api, segment } from './api.js';

/** Starts the sign-in to `serverId`; `authorizationUrl` (from an `auth_required` event) skips the API call. */
export async function connectServer(serverId, { authorizationUrl = null } = {}) {
  const url = authorizationUrl ?? (await api.post(`/api/mcp/servers/${segment(serverId)}/oauth/authorize`, {}))?.authorization_url;
  if (!url) throw new Error('The server did not say where to sign in.');
  window.location.assign(url);
}

/** Forgets the caller's connection to `serverId` (revoked at the authorization server when it can be). */
export async function disconnectServer(serverId) {
  await api.delete(`/api/mcp/servers/${segment(serverId)}/oauth`);
}

/** `{kind: 'connected'|'error', server, reason}` from the servers page's query, or null. */
export function readSignInResult(query) {
  const outcome = query?.get('oauth');
  if (outcome !== 'connected' && outcome !== 'error') return null;
  return { kind: outcome, server: query.get('server') ?? '', reason: query.get('reason') ?? '' };
}

/** Whether `server` (a server view) uses OAuth and the caller has not connected it. */
export function needsSignIn(server) {
  return server?.auth?.mode === 'oauth' && server.auth.connected !== true;
}
