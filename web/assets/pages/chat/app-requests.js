// app-requests: the host's answers to an MCP App's requests (the `ui/*` dialect of SEP-1865 and
// the MCP methods an app may use). `ui/initialize` gets the host's capabilities and context
// (theme and host styles from app-host-context.js, locale, time zone, display mode, container
// size, the permissions granted); the app's `tools/call` and `resources/read` go to its own
// server through the API, so the approval gate, policies, pins and audit apply (while one waits
// for a person, its approval card shows under the app: app-approvals.js); its own server's
// lists come from app-server-lists.js; `ui/open-link`, `ui/message` and `ui/download-file` ask
// the person first (app-dialogs.js; an accepted message is handed to the chat page as the
// person's next message; files are saved by app-downloads.js), one question at a time;
// `ui/update-model-context` is stored by the API and given to the model on the next turn;
// `ui/request-display-mode` goes to app-display.js. `sampling/createMessage` is refused: an app
// does not ask the chat's models. Anything else is "method not found".

import { api, segment } from '../../lib/api.js';
import { confirmAppMessage, confirmOpenLink } from './app-dialogs.js';
import { DownloadRequestError, downloadFiles } from './app-downloads.js';
import { hostStyles, hostTheme } from './app-host-context.js';
import { listOwnServer } from './app-server-lists.js';
import { INVALID_PARAMS, METHOD_NOT_FOUND } from './app-channel.js';

const PROTOCOL_VERSION = '2026-01-26';

export class AppRequests {
  /**
   * `frame`: the AppFrame answered for (its conversation, call, server, tool, loaded `app`,
   * `granted` permissions, `approvals`, `display`, `element` and whether it is `disposed`).
   */
  constructor(frame) {
    this.frame = frame;
    this.asking = false;
  }

  /** The result of the app's request `method`, or a thrown error with a JSON-RPC `code`. */
  async handle(method, params) {
    switch (method) {
      case 'ui/initialize':
        return this.#initializeResult(params);
      case 'ping':
        return {};
      case 'tools/call':
        return this.#callTool(params);
      case 'resources/read':
        return this.#readResource(params);
      case 'resources/list':
      case 'resources/templates/list':
      case 'prompts/list':
        return listOwnServer(method, { conversationId: this.frame.conversationId, server: this.frame.app.server ?? this.frame.server });
      case 'ui/download-file':
        return this.#downloadFile(params);
      case 'sampling/createMessage':
        throw Object.assign(new Error('sampling/createMessage is refused: this host does not let an app ask its models'), { code: METHOD_NOT_FOUND });
      case 'ui/open-link':
        return this.#openLink(params);
      case 'ui/message':
        return this.#message(params);
      case 'ui/update-model-context':
        return this.#updateModelContext(params);
      case 'ui/request-display-mode':
        return { mode: this.frame.display.setMode(params.mode) };
      default:
        throw Object.assign(new Error(`${method} is not supported by this host`), { code: METHOD_NOT_FOUND });
    }
  }

  #initializeResult(params) {
    const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : PROTOCOL_VERSION;
    return {
      protocolVersion: asked === PROTOCOL_VERSION ? asked : PROTOCOL_VERSION,
      hostInfo: { name: 'Switchboard', version: '1' },
      hostCapabilities: {
        serverTools: {},
        serverResources: {},
        logging: {},
        openLinks: {},
        downloadFile: {},
        message: { text: {} },
        updateModelContext: { text: {}, structuredContent: {} },
        sandbox: { permissions: Object.fromEntries(this.frame.granted.map((name) => [name, {}])) },
      },
      hostContext: {
        theme: hostTheme(),
        styles: hostStyles(),
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        displayMode: this.frame.display.mode,
        availableDisplayModes: ['inline', 'fullscreen'],
        containerDimensions: this.frame.display.dimensions(),
        platform: 'web',
        toolInfo: { tool: { name: this.frame.tool, inputSchema: { type: 'object' } } },
      },
    };
  }

  /** The app's call to a tool of its own server: the API checks it is one, and gates it. */
  async #callTool(params) {
    const answer = await this.frame.approvals.around(async () => api.post(await this.#appPath('tool-calls'), {
      name: String(params.name ?? ''),
      arguments: objectOrEmpty(params.arguments),
    }));
    return answer.result;
  }

  /** The API path of the app's `rest` route; an app shown before its call exists waits for it. */
  async #appPath(rest) {
    const toolCallId = await this.frame.whenCalled();
    return `/chat/conversations/${segment(this.frame.conversationId)}/tool-calls/${segment(toolCallId)}/app/${rest}`;
  }

  /** The app reads a resource of its own server: the API checks it is one, and gates it. */
  async #readResource(params) {
    const answer = await this.frame.approvals.around(async () => api.post(await this.#appPath('resources/read'), { uri: String(params.uri ?? '') }));
    return answer.result;
  }

  /** Opens an http(s) link in a new tab (no opener, no referrer) once the person agrees. */
  async #openLink(params) {
    let url;
    try {
      url = new URL(String(params.url ?? ''));
    } catch {
      return { isError: true };
    }
    if (!/^https?:$/.test(url.protocol) || this.asking) return { isError: true };
    if (!await this.#askPerson(() => confirmOpenLink(url.href, this.frame.label()))) return { isError: true };
    window.open(url.href, '_blank', 'noopener,noreferrer');
    return {};
  }

  /**
   * A message the app wants to add: shown to the person, and once they accept it, handed to the
   * chat page (event `mcp-app-message`), which sends it as their next message.
   */
  async #message(params) {
    const blocks = Array.isArray(params.content) ? params.content : [];
    if ((params.role ?? 'user') !== 'user') throw invalidParams('only role "user" is supported');
    if (blocks.some((block) => block?.type !== 'text' || typeof block.text !== 'string')) return { isError: true };
    const text = blocks.map((block) => block.text).join('\n\n').trim();
    if (!text || this.asking) return { isError: true };
    if (!await this.#askPerson(() => confirmAppMessage(text, this.frame.label()))) return { isError: true };
    this.frame.element.dispatchEvent(new CustomEvent('mcp-app-message', { bubbles: true, detail: { text } }));
    return {};
  }

  /** Files the app offers (embedded resources, or links read from its own server, gated), once the person agrees. */
  async #downloadFile(params) {
    if (this.asking) return { isError: true };
    try {
      const readLink = (uri) => this.#readResource({ uri });
      return (await this.#askPerson(() => downloadFiles(params.contents, this.frame.label(), readLink))) || { isError: true };
    } catch (error) {
      throw error instanceof DownloadRequestError ? invalidParams(error.message) : error;
    }
  }

  /** One question to the person at a time per app: an app cannot stack dialogs. */
  async #askPerson(question) {
    this.asking = true;
    try {
      return !this.frame.disposed && await question();
    } finally {
      this.asking = false;
    }
  }

  /** The app's context for the model: stored by the API, given to the model on the next turn. */
  async #updateModelContext(params) {
    const blocks = Array.isArray(params.content) ? params.content : [];
    if (blocks.some((block) => block?.type !== 'text' || typeof block.text !== 'string')) {
      throw invalidParams('this host takes text content and structuredContent only');
    }
    await api.put(await this.#appPath('model-context'), {
      content: blocks.map((block) => ({ type: 'text', text: block.text })),
      ...(params.structuredContent !== undefined ? { structured_content: params.structuredContent } : {}),
    });
    return {};
  }
}

function invalidParams(message) {
  return Object.assign(new Error(message), { code: INVALID_PARAMS });
}

/** An object from the call's arguments (an object, or its JSON text); `{}` otherwise. */
export function objectOrEmpty(value) {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}
