// app-frame: an MCP App (extension io.modelcontextprotocol/ui, SEP-1865) under its tool call.
// The app's HTML is loaded from the apps origin (a second listener, never this page's origin)
// into <iframe sandbox="allow-scripts">: an opaque origin, so it reaches no cookie, storage or
// token of ours, cannot touch this document, and the page's policy (its resource's declared
// CSP, none = no network) comes with the response. This module is the host side of the app's
// `ui/*` JSON-RPC over postMessage: `ui/initialize` (host context: theme, locale, time zone,
// display mode, container size), `ui/notifications/initialized`, then tool input and tool
// result, size changes, the app's `tools/call` to its own server (through the API, so the
// approval gate, policies, pins and audit apply), and `ui/resource-teardown` before removal.
// Every message is checked: from this iframe's own window, from the opaque origin `null`.

import { h } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';

const PROTOCOL_VERSION = '2026-01-26';
const TEARDOWN_WAIT_MS = 500;
const MIN_HEIGHT = 48;
const MAX_HEIGHT = 720;

/** JSON-RPC error codes used toward the app. */
const METHOD_NOT_FOUND = -32601;
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
    this.onMessage = (event) => this.#receive(event);
    this.element = h('div', { class: 'mcp-app', dataset: { toolCallId: toolCallId ?? '', state: 'loading' } });
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
    });
    this.iframe.style.height = `${MIN_HEIGHT * 3}px`;
    if (this.app.prefers_border === false) this.element.classList.add('mcp-app-borderless');
    window.addEventListener('message', this.onMessage);
    this.element.append(this.iframe);
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
    for (const { reject } of this.pending.values()) reject(new Error('the app was removed'));
    this.pending.clear();
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
      this.#post({ jsonrpc: '2.0', id, error: { code: error.code ?? INTERNAL_ERROR, message: error.message ?? String(error) } });
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
      default:
        throw Object.assign(new Error(`${method} is not supported by this host`), { code: METHOD_NOT_FOUND });
    }
  }

  #initializeResult(params) {
    const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : PROTOCOL_VERSION;
    const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
    return {
      protocolVersion: asked === PROTOCOL_VERSION ? asked : PROTOCOL_VERSION,
      hostInfo: { name: 'Switchboard', version: '1' },
      hostCapabilities: { serverTools: {}, logging: {} },
      hostContext: {
        theme: dark ? 'dark' : 'light',
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        displayMode: 'inline',
        availableDisplayModes: ['inline'],
        containerDimensions: { width: Math.round(this.element.clientWidth || 600), maxHeight: MAX_HEIGHT },
        platform: 'web',
        toolInfo: { tool: { name: this.tool, inputSchema: { type: 'object' } } },
      },
    };
  }

  /** The app's call to a tool of its own server: the API checks it is one, and gates it. */
  async #callTool(params) {
    const answer = await api.post(`/chat/conversations/${segment(this.conversationId)}/tool-calls/${segment(this.toolCallId)}/app/tool-calls`, {
      name: String(params.name ?? ''),
      arguments: objectOrEmpty(params.arguments),
    });
    return answer.result;
  }

  #notification({ method, params }) {
    if (method === 'ui/notifications/initialized') {
      this.initialized = true;
      this.element.dataset.state = 'ready';
      for (const message of this.queued.splice(0)) this.#post(message);
    } else if (method === 'ui/notifications/size-changed') {
      const height = Number(params?.height);
      if (Number.isFinite(height) && this.iframe) {
        this.iframe.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)))}px`;
      }
    }
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
