// app-frame: an MCP App (extension io.modelcontextprotocol/ui, SEP-1865) under its tool call.
// The app's HTML is loaded from the apps origin (a second listener, never this page's origin)
// into <iframe sandbox="allow-scripts">: an opaque origin, so it reaches no cookie, storage or
// token of ours, cannot touch this document, and the page's policy (its resource's declared
// CSP, none = no network) comes with the response. This module is the host side of the app's
// `ui/*` JSON-RPC over postMessage: `ui/initialize` (host context: theme and host styles from
// app-host-context.js, locale, time zone, display mode, container size; theme changes told with
// `host-context-changed`), `ui/notifications/initialized`, then tool input and tool result, size
// changes, the app's `tools/call` and `resources/read` to its own server (through the API, so
// the approval gate, policies, pins and audit apply; while one waits for a person, its approval
// card shows under the app: app-approvals.js), its own server's lists (app-server-lists.js),
// `ui/open-link`, `ui/message` and `ui/download-file` (the person is asked first, in
// app-dialogs.js; an accepted message is sent as the person's next message; files are saved by
// app-downloads.js), `ui/update-model-context` (stored by the API, given to the model on the
// next turn), display modes (inline, fullscreen; told back with `host-context-changed`), the
// permissions the resource declares and the person allows (the iframe's `allow`), log messages
// (to the console, capped), `ui/notifications/request-teardown` (granted) and
// `ui/resource-teardown` before removal. `sampling/createMessage` is refused: an app does not
// ask the chat's models. Partial tool input is never sent: the model path hands the chat a call
// only once its arguments are complete. Every message is checked: from this iframe's own
// window, from the opaque origin `null`.

import { h } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';
import { PERMISSION_FEATURES, askPermissions, confirmAppMessage, confirmOpenLink } from './app-dialogs.js';
import { AppApprovals } from './app-approvals.js';
import { DownloadRequestError, downloadFiles } from './app-downloads.js';
import { hostStyles, hostTheme, watchTheme } from './app-host-context.js';
import { listOwnServer } from './app-server-lists.js';

const PROTOCOL_VERSION = '2026-01-26';
const TEARDOWN_WAIT_MS = 500;
const MIN_HEIGHT = 48;
const MAX_HEIGHT = 720;
/** Log messages of one app shown in the console, at most. */
const MAX_LOGGED = 100;

/** What the person allowed each app (server, resource, hash) for this page's life. */
const grantedPermissions = new Map();

/** JSON-RPC error codes used toward the app. */
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

export class AppFrame {
  constructor({ conversationId, toolCallId, server, tool }) {
    this.conversationId = conversationId;
    this.toolCallId = toolCallId;
    this.server = server;
    this.tool = tool;
    this.initialized = false;
    this.queued = [];
    this.pending = new Map();
    this.nextRequestId = 1;
    this.displayMode = 'inline';
    this.inlineHeight = MIN_HEIGHT * 3;
    this.granted = [];
    this.onMessage = (event) => this.#receive(event);
    this.onKey = (event) => { if (event.key === 'Escape' && this.displayMode === 'fullscreen') this.#setDisplayMode('inline'); };
    this.exitButton = h('button', { type: 'button', class: 'button mcp-app-exit', text: 'Exit full screen', hidden: true, onclick: () => this.#setDisplayMode('inline') });
    this.approvals = new AppApprovals({ conversationId, toolCallId });
    this.element = h('div', { class: 'mcp-app', dataset: { toolCallId: toolCallId ?? '', state: 'loading', displayMode: 'inline' } }, this.exitButton);
  }

  /** Asks the API for the app and frames it. */
  async load() {
    try {
      this.app = await api.get(`/chat/conversations/${segment(this.conversationId)}/tool-calls/${segment(this.toolCallId)}/app`);
    } catch (error) {
      this.element.dataset.state = 'unavailable';
      this.element.append(h('p', { class: 'muted small', text: `The app of this tool call cannot be shown: ${error.message}` }));
      return;
    }
    if (this.disposed) return;
    this.granted = await this.#grantPermissions();
    if (this.disposed) return;
    if (this.fromHistory) {
      this.toolInput(this.app.arguments);
      if (this.app.result) this.toolResult(this.app.result);
      else if (this.app.state !== 'completed') this.toolCancelled(this.app.state);
    }
    this.iframe = h('iframe', {
      class: 'mcp-app-frame',
      sandbox: 'allow-scripts',
      src: this.app.sandbox_url,
      title: `App of ${this.server} · ${this.tool}`,
      referrerpolicy: 'no-referrer',
      allow: this.granted.map((name) => PERMISSION_FEATURES[name].feature).join('; ') || false,
    });
    this.iframe.style.height = `${this.inlineHeight}px`;
    if (this.app.prefers_border === false) this.element.classList.add('mcp-app-borderless');
    window.addEventListener('message', this.onMessage);
    window.addEventListener('keydown', this.onKey);
    this.stopWatchingTheme = watchTheme((change) => this.#notifyWhenReady('ui/notifications/host-context-changed', change));
    this.element.append(this.approvals.element, this.iframe);
  }

  /** The declared permissions the person allows (asked once per app and page). */
  async #grantPermissions() {
    const declared = (this.app.permissions ?? []).filter((name) => PERMISSION_FEATURES[name]);
    if (declared.length === 0) return [];
    const key = `${this.app.server_id}|${this.app.resource_uri}|${this.app.resource_sha256}`;
    if (!grantedPermissions.has(key)) grantedPermissions.set(key, askPermissions(declared, this.#label()));
    return grantedPermissions.get(key);
  }

  #label() {
    return `${this.server} · ${this.tool}`;
  }

  /** The complete arguments of the call. */
  toolInput(argumentsValue) {
    this.#notifyWhenReady('ui/notifications/tool-input', { arguments: objectOrEmpty(argumentsValue) });
  }

  /** The call's result (an MCP CallToolResult). */
  toolResult(result) {
    this.resultAt = performance.now();
    this.#notifyWhenReady('ui/notifications/tool-result', result && typeof result === 'object' ? result : { content: [] });
  }

  /** The call will not produce a result (denied, failed, unknown). */
  toolCancelled(reason) {
    this.#notifyWhenReady('ui/notifications/tool-cancelled', { reason: String(reason ?? 'the call did not complete') });
  }

  /** Asks the app to tear down (waits briefly), then removes it. */
  async dispose() {
    if (this.disposed) return;
    this.disposed = true;
    if (this.iframe && this.initialized) {
      await Promise.race([this.#request('ui/resource-teardown', {}).catch(() => {}), sleep(TEARDOWN_WAIT_MS)]);
    }
    window.removeEventListener('message', this.onMessage);
    window.removeEventListener('keydown', this.onKey);
    this.stopWatchingTheme?.();
    for (const { reject } of this.pending.values()) reject(new Error('the app was removed'));
    this.pending.clear();
    this.approvals.dispose();
    this.iframe?.remove();
    this.element.dataset.state = 'closed';
  }

  #receive(event) {
    // Only this frame's window, and only while it is sandboxed (opaque origin): a message from
    // any other window or origin is not the app's.
    if (!this.iframe || event.source !== this.iframe.contentWindow || event.origin !== 'null') return;
    const message = event.data;
    if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') return;
    if (typeof message.method === 'string') {
      if (message.id !== undefined && message.id !== null) this.#answer(message);
      else this.#notification(message);
    } else if (this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message ?? 'error'));
      else resolve(message.result);
    }
  }

  async #answer({ id, method, params }) {
    try {
      const result = await this.#handle(method, params ?? {});
      this.#post({ jsonrpc: '2.0', id, result });
    } catch (error) {
      // JSON-RPC codes are integers (an API error's `code` is a word: not one of them).
      const code = Number.isInteger(error.code) ? error.code : INTERNAL_ERROR;
      this.#post({ jsonrpc: '2.0', id, error: { code, message: error.message ?? String(error) } });
    }
  }

  async #handle(method, params) {
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
        return listOwnServer(method, { conversationId: this.conversationId, server: this.app.server ?? this.server });
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
        return { mode: this.#setDisplayMode(params.mode) };
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
        sandbox: { permissions: Object.fromEntries(this.granted.map((name) => [name, {}])) },
      },
      hostContext: {
        theme: hostTheme(),
        styles: hostStyles(),
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        displayMode: this.displayMode,
        availableDisplayModes: ['inline', 'fullscreen'],
        containerDimensions: this.#dimensions(),
        platform: 'web',
        toolInfo: { tool: { name: this.tool, inputSchema: { type: 'object' } } },
      },
    };
  }

  /** The app's call to a tool of its own server: the API checks it is one, and gates it. */
  async #callTool(params) {
    const answer = await this.approvals.around(() => api.post(this.#appPath('tool-calls'), {
      name: String(params.name ?? ''),
      arguments: objectOrEmpty(params.arguments),
    }));
    return answer.result;
  }

  #appPath(rest) {
    return `/chat/conversations/${segment(this.conversationId)}/tool-calls/${segment(this.toolCallId)}/app/${rest}`;
  }

  /** The app reads a resource of its own server: the API checks it is one, and gates it. */
  async #readResource(params) {
    const answer = await this.approvals.around(() => api.post(this.#appPath('resources/read'), { uri: String(params.uri ?? '') }));
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
    if (!await this.#askPerson(() => confirmOpenLink(url.href, this.#label()))) return { isError: true };
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
    if (!await this.#askPerson(() => confirmAppMessage(text, this.#label()))) return { isError: true };
    this.element.dispatchEvent(new CustomEvent('mcp-app-message', { bubbles: true, detail: { text } }));
    return {};
  }

  /** Files the app offers (embedded resources, or links read from its own server, gated), once the person agrees. */
  async #downloadFile(params) {
    if (this.asking) return { isError: true };
    try {
      const readLink = (uri) => this.#readResource({ uri });
      return (await this.#askPerson(() => downloadFiles(params.contents, this.#label(), readLink))) || { isError: true };
    } catch (error) {
      throw error instanceof DownloadRequestError ? invalidParams(error.message) : error;
    }
  }

  /** One question to the person at a time per app: an app cannot stack dialogs. */
  async #askPerson(question) {
    this.asking = true;
    try {
      return !this.disposed && await question();
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
    await api.put(this.#appPath('model-context'), {
      content: blocks.map((block) => ({ type: 'text', text: block.text })),
      ...(params.structuredContent !== undefined ? { structured_content: params.structuredContent } : {}),
    });
    return {};
  }

  /** Grants `inline` or `fullscreen` (anything else keeps the current mode); returns the mode. */
  #setDisplayMode(requested) {
    const mode = requested === 'fullscreen' || requested === 'inline' ? requested : this.displayMode;
    if (mode === this.displayMode || !this.iframe) return this.displayMode;
    this.displayMode = mode;
    this.element.dataset.displayMode = mode;
    this.element.classList.toggle('mcp-app-fullscreen', mode === 'fullscreen');
    this.exitButton.hidden = mode !== 'fullscreen';
    this.iframe.style.height = mode === 'fullscreen' ? '' : `${this.inlineHeight}px`;
    this.#notifyWhenReady('ui/notifications/host-context-changed', { displayMode: mode, containerDimensions: this.#dimensions() });
    return mode;
  }

  #dimensions() {
    if (this.displayMode === 'fullscreen') return { width: window.innerWidth, height: window.innerHeight };
    return { width: Math.round(this.element.clientWidth || 600), maxHeight: MAX_HEIGHT };
  }

  #notification({ method, params }) {
    if (method === 'ui/notifications/initialized') {
      this.initialized = true;
      this.element.dataset.state = 'ready';
      for (const message of this.queued.splice(0)) this.#post(message);
    } else if (method === 'ui/notifications/size-changed') {
      const height = Number(params?.height);
      if (Number.isFinite(height) && this.iframe) {
        this.inlineHeight = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)));
        if (this.displayMode === 'inline') this.iframe.style.height = `${this.inlineHeight}px`;
      }
    } else if (method === 'notifications/message') {
      this.#log(params);
    } else if (method === 'ui/notifications/request-teardown') {
      this.#closeOnRequest();
    }
  }

  /** The app's log message, to the console (for whoever debugs it), at most MAX_LOGGED of them. */
  #log(params) {
    this.logged = (this.logged ?? 0) + 1;
    if (this.logged > MAX_LOGGED) return;
    const data = typeof params?.data === 'string' ? params.data : JSON.stringify(params?.data);
    console.debug(`[MCP App ${this.#label()}] ${String(params?.level ?? 'info')}: ${data}`);
  }

  /** The app asked to be closed: it is torn down as on removal, and a note stays in its place. */
  async #closeOnRequest() {
    if (this.disposed) return;
    await this.dispose();
    this.element.append(h('p', { class: 'muted small mcp-app-closed', text: 'The app closed itself.' }));
  }

  #notifyWhenReady(method, params) {
    const message = { jsonrpc: '2.0', method, params };
    if (this.initialized) this.#post(message);
    else this.queued.push(message);
  }

  #request(method, params) {
    const id = `host-${this.nextRequestId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.#post({ jsonrpc: '2.0', id, method, params });
    });
  }

  #post(message) {
    // The frame's origin is opaque ("null"), which postMessage cannot name: the message goes
    // to this one window object, whatever it shows.
    this.iframe?.contentWindow?.postMessage(message, '*');
  }
}

function invalidParams(message) {
  return Object.assign(new Error(message), { code: INVALID_PARAMS });
}

function objectOrEmpty(value) {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
