// app-server-lists: an MCP App's `resources/list`, `resources/templates/list` and `prompts/list`,
// answered with its own server's items only — what the composer lists (`GET
// /chat/context-items` of the conversation, live), put back into MCP's shapes. Listing is not a
// call: no approval, as at the gateway; reading a resource stays gated (`resources/read`).

import { api, listItems } from '../../lib/api.js';

/** The MCP result of `method` for the server `server` of the conversation. */
export async function listOwnServer(method, { conversationId, server }) {
  const answer = await api.get(`/chat/context-items?conversation_id=${encodeURIComponent(conversationId)}`);
  const own = listItems(answer, 'servers').find((entry) => entry.server === server);
  if (!own) {
    const failed = listItems(answer, 'failed').find((entry) => entry.server === server);
    throw new Error(failed ? `${server} could not be listed: ${failed.message}` : `${server} is not a server of this conversation`);
  }
  if (method === 'resources/list') {
    return { resources: own.resources.map(({ uri, name, title, description, mime_type: mimeType }) => present({ uri, name, title, description, mimeType })) };
  }
  if (method === 'resources/templates/list') {
    return {
      resourceTemplates: own.resource_templates.map(({ uri_template: uriTemplate, name, title, description, mime_type: mimeType }) => present({ uriTemplate, name, title, description, mimeType })),
    };
  }
  return {
    prompts: own.prompts.map(({ name, title, description, arguments: parameters }) => present({
      name, title, description, arguments: parameters.map((parameter) => present(parameter)),
    })),
  };
}

/** The object without its null or missing fields (MCP leaves optional fields out). */
function present(object) {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== null && value !== undefined));
}
