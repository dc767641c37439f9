// app-channel: the JSON-RPC 2.0 link between this page and one MCP App's sandboxed frame, over
// postMessage. It owns the wire only: every message is checked (from this iframe's own window,
// from the opaque origin `null`), the app's requests are answered with what `onRequest` returns
// (or its error as a JSON-RPC error), its notifications go to `onNotification`, the host's own
// requests wait for their answers, and the host's notifications wait until the app said it is
// initialized. What the messages mean is app-requests.js's and app-frame.js's.

/** JSON-RPC error codes used toward the app. */
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

export class AppChannel {
  /**
   * `onRequest(method, params)` answers the app's requests (its result, or a thrown error with
   * an integer `code`); `onNotification({method, params})` hears its notifications.
   */
  constructor({ onRequest, onNotification }) {
    this.onRequest = onRequest;
    this.onNotification = onNotification;
    this.iframe = null;
    this.initialized = false;
    this.queued = [];
    this.pending = new Map();
    this.nextRequestId = 1;
    this.onMessage = (event) => this.#receive(event);
  }

  /** Starts hearing `iframe`'s window. */
  open(iframe) {
    this.iframe = iframe;
    window.addEventListener('message', this.onMessage);
  }

  /** The app said `ui/notifications/initialized`: the notifications that waited go out. */
  markInitialized() {
    this.initialized = true;
    for (const message of this.queued.splice(0)) this.#post(message);
  }

  /** Stops hearing the frame; the host's requests still waiting fail. */
  close() {
    window.removeEventListener('message', this.onMessage);
    for (const { reject } of this.pending.values()) reject(new Error('the app was removed'));
    this.pending.clear();
  }

  /** A notification to the app, sent once it is initialized. */
  notifyWhenReady(method, params, { replaces = false } = {}) {
    const message = { jsonrpc: '2.0', method, params };
    if (this.initialized) {
      this.#post(message);
      return;
    }
    // A notification that `replaces` supersedes the one of its method waiting (partial input).
    const waiting = replaces ? this.queued.findIndex((queued) => queued.method === method) : -1;
    if (waiting >= 0) this.queued[waiting] = message;
    else this.queued.push(message);
  }

  /** A request to the app; resolves to its result. */
  request(method, params) {
    const id = `host-${this.nextRequestId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.#post({ jsonrpc: '2.0', id, method, params });
    });
  }

  #receive(event) {
    // Only this frame's window, and only while it is sandboxed (opaque origin): a message from
    // any other window or origin is not the app's.
    if (!this.iframe || event.source !== this.iframe.contentWindow || event.origin !== 'null') return;
    const message = event.data;
    if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') return;
    if (typeof message.method === 'string') {
      if (message.id !== undefined && message.id !== null) this.#answer(message);
      else this.onNotification(message);
    } else if (this.pending.has(message.id)) {
      const { resolve, reject } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message ?? 'error'));
      else resolve(message.result);
    }
  }

  async #answer({ id, method, params }) {
    try {
      const result = await this.onRequest(method, params ?? {});
      this.#post({ jsonrpc: '2.0', id, result });
    } catch (error) {
      // JSON-RPC codes are integers (an API error's `code` is a word: not one of them).
      const code = Number.isInteger(error.code) ? error.code : INTERNAL_ERROR;
      this.#post({ jsonrpc: '2.0', id, error: { code, message: error.message ?? String(error) } });
    }
  }

  #post(message) {
    // The frame's origin is opaque ("null"), which postMessage cannot name: the message goes
    // to this one window object, whatever it shows.
    this.iframe?.contentWindow?.postMessage(message, '*');
  }
}
