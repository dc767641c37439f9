// app-frame: an MCP App (extension io.modelcontextprotocol/ui, SEP-1865) under its tool call —
// the sandboxed frame's life. The app's HTML is loaded from the apps origin (a second listener,
// never this page's origin) into <iframe sandbox="allow-scripts">: an opaque origin, so it
// reaches no cookie, storage or token of ours, cannot touch this document, and the page's policy
// (its resource's declared CSP, none = no network) comes with the response. This module asks the
// API for the app, asks the person for the permissions the resource declares (the iframe's
// `allow`), frames it, hands it the call's input and result (or why there is none), tells it of
// theme changes, hears its notifications (`ui/notifications/initialized`, size changes, log
// messages to the console, capped; `ui/notifications/request-teardown`, granted) and tears it
// down (`ui/resource-teardown`, waited for briefly) before removing it. The wire is
// app-channel.js's, the answers to the app's requests app-requests.js's, its size and display
// mode app-display.js's. An app can be shown before its call exists, while the model still
// writes the input (`tool_input_partial` events): it is loaded by the app the event names
// (`…/app-preview`), given each partial input (`ui/notifications/tool-input-partial`, only the
// newest waits for the app to be ready), and adopted by the call once it starts; its requests
// that need the call wait for that.

import { h } from '../../lib/dom.js';
import { api, segment } from '../../lib/api.js';
import { PERMISSION_FEATURES, askPermissions } from './app-dialogs.js';
import { AppApprovals } from './app-approvals.js';
import { watchTheme } from './app-host-context.js';
import { AppChannel } from './app-channel.js';
import { AppDisplay } from './app-display.js';
import { AppRequests, objectOrEmpty } from './app-requests.js';

const TEARDOWN_WAIT_MS = 500;
/** Log messages of one app shown in the console, at most. */
const MAX_LOGGED = 100;

/** What the person allowed each app (server, resource, hash) for this page's life. */
const grantedPermissions = new Map();

export class AppFrame {
  /** `preview`: the app a `tool_input_partial` event names, when there is no call yet. */
  constructor({ conversationId, toolCallId, server, tool, preview }) {
    this.conversationId = conversationId;
    this.toolCallId = toolCallId;
    this.preview = preview;
    this.called = new Promise((resolve, reject) => { this.settleCall = { resolve, reject }; });
    this.called.catch(() => {});
    if (toolCallId) this.settleCall.resolve(toolCallId);
    this.server = server;
    this.tool = tool;
    this.granted = [];
    const requests = new AppRequests(this);
    this.channel = new AppChannel({
      onRequest: (method, params) => requests.handle(method, params),
      onNotification: (message) => this.#notification(message),
    });
    this.display = new AppDisplay({ onChange: (change) => this.channel.notifyWhenReady('ui/notifications/host-context-changed', change) });
    this.approvals = new AppApprovals({ conversationId, toolCallId });
    this.element = h('div', { class: 'mcp-app', dataset: { toolCallId: toolCallId ?? '', state: 'loading', displayMode: 'inline' } }, this.display.exitButton);
  }

  /** Asks the API for the app and frames it. */
  async load() {
    try {
      this.app = await api.get(this.#appUrl());
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
      title: `App of ${this.label()}`,
      referrerpolicy: 'no-referrer',
      allow: this.granted.map((name) => PERMISSION_FEATURES[name].feature).join('; ') || false,
    });
    this.display.attach(this.element, this.iframe);
    if (this.app.prefers_border === false) this.element.classList.add('mcp-app-borderless');
    this.channel.open(this.iframe);
    this.stopWatchingTheme = watchTheme((change) => this.channel.notifyWhenReady('ui/notifications/host-context-changed', change));
    this.element.append(this.approvals.element, this.iframe);
  }

  /** Where the app is asked for: its call's, or before the call exists the one it will have. */
  #appUrl() {
    const conversation = `/chat/conversations/${segment(this.conversationId)}`;
    if (this.toolCallId) return `${conversation}/tool-calls/${segment(this.toolCallId)}/app`;
    const query = new URLSearchParams({
      server_id: this.preview.server_id,
      resource_uri: this.preview.resource_uri,
      resource_sha256: this.preview.resource_sha256,
    });
    return `${conversation}/app-preview?${query}`;
  }

  /** The call shown before it existed has started: from now on the app is that call's. */
  adopt(toolCallId) {
    this.toolCallId = toolCallId;
    this.approvals.toolCallId = toolCallId;
    this.element.dataset.toolCallId = toolCallId;
    this.settleCall.resolve(toolCallId);
  }

  /** The call's id, once there is one (an app shown before its call waits for it). */
  whenCalled() {
    return this.called;
  }

  /** The declared permissions the person allows (asked once per app and page). */
  async #grantPermissions() {
    const declared = (this.app.permissions ?? []).filter((name) => PERMISSION_FEATURES[name]);
    if (declared.length === 0) return [];
    const key = `${this.app.server_id}|${this.app.resource_uri}|${this.app.resource_sha256}`;
    if (!grantedPermissions.has(key)) grantedPermissions.set(key, askPermissions(declared, this.label()));
    return grantedPermissions.get(key);
  }

  /** The app's name as the person reads it in questions and titles. */
  label() {
    return `${this.server} · ${this.tool}`;
  }

  /** The arguments as far as the model has written them (before the call exists). */
  toolInputPartial(argumentsValue) {
    if (this.sentInput) return;
    this.channel.notifyWhenReady('ui/notifications/tool-input-partial', { arguments: objectOrEmpty(argumentsValue) }, { replaces: true });
  }

  /** The complete arguments of the call. */
  toolInput(argumentsValue) {
    this.sentInput = true;
    this.channel.notifyWhenReady('ui/notifications/tool-input', { arguments: objectOrEmpty(argumentsValue) });
  }

  /** The call's result (an MCP CallToolResult). */
  toolResult(result) {
    this.resultAt = performance.now();
    this.channel.notifyWhenReady('ui/notifications/tool-result', result && typeof result === 'object' ? result : { content: [] });
  }

  /** The call will not produce a result (denied, failed, unknown). */
  toolCancelled(reason) {
    this.channel.notifyWhenReady('ui/notifications/tool-cancelled', { reason: String(reason ?? 'the call did not complete') });
  }

  /** Asks the app to tear down (waits briefly), then removes it. */
  async dispose() {
    if (this.disposed) return;
    this.disposed = true;
    if (this.iframe && this.channel.initialized) {
      await Promise.race([this.channel.request('ui/resource-teardown', {}).catch(() => {}), sleep(TEARDOWN_WAIT_MS)]);
    }
    this.channel.close();
    this.display.detach();
    this.stopWatchingTheme?.();
    this.approvals.dispose();
    this.settleCall.reject(new Error('the app was removed'));
    this.iframe?.remove();
    this.element.dataset.state = 'closed';
  }

  #notification({ method, params }) {
    if (method === 'ui/notifications/initialized') {
      this.channel.markInitialized();
      this.element.dataset.state = 'ready';
    } else if (method === 'ui/notifications/size-changed') {
      this.display.resize(Number(params?.height));
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
    console.debug(`[MCP App ${this.label()}] ${String(params?.level ?? 'info')}: ${data}`);
  }

  /** The app asked to be closed: it is torn down as on removal, and a note stays in its place. */
  async #closeOnRequest() {
    if (this.disposed) return;
    await this.dispose();
    this.element.append(h('p', { class: 'muted small mcp-app-closed', text: 'The app closed itself.' }));
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
