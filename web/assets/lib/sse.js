// sse: Server-Sent Events over fetch streams. EventSource cannot POST or send an Authorization
// header, so the chat stream is read with fetch and parsed here following the WHATWG
// event-stream rules (any line ending, `data:` lines joined by newlines, comments ignored, a
// blank line dispatches). Each event's data is one JSON object; its type comes from the `type`
// field or, failing that, from the `event:` field.

/** Incremental event-stream parser: feed text chunks, get complete events back. */
export class EventStreamParser {
  constructor() {
    this.buffer = '';
    this.dataLines = [];
    this.eventName = '';
    this.lastEventId = '';
    this.pendingCarriageReturn = false;
  }

  /** Feeds one decoded chunk; returns the events completed by it as `{event, data, id}`. */
  push(chunk) {
    let text = chunk;
    if (this.pendingCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.pendingCarriageReturn = text.endsWith('\r');
    this.buffer += text;
    const events = [];
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop();
    for (const line of lines) this.#processLine(line, events);
    return events;
  }

  /** Flushes at end of stream: a final event without its blank line is still delivered. */
  finish() {
    const events = [];
    if (this.buffer) this.#processLine(this.buffer, events);
    this.buffer = '';
    this.#processLine('', events);
    return events;
  }

  #processLine(line, events) {
    if (line === '') {
      if (this.dataLines.length > 0) {
        events.push({ event: this.eventName || 'message', data: this.dataLines.join('\n'), id: this.lastEventId });
      }
      this.dataLines = [];
      this.eventName = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
    else if (field === 'id' && !value.includes('\u0000')) this.lastEventId = value;
  }
}

/** Turns a raw SSE event into a typed chat event `{type, ...payload}`; unparsable data → `error`. */
export function toChatEvent(rawEvent) {
  let payload;
  try {
    payload = JSON.parse(rawEvent.data);
  } catch {
    return { type: 'error', error: `The server sent an unreadable event: ${rawEvent.data.slice(0, 120)}` };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { type: rawEvent.event, value: payload };
  }
  const type = typeof payload.type === 'string' ? payload.type : rawEvent.event;
  const nested = payload.data && typeof payload.data === 'object' && !Array.isArray(payload.data) ? payload.data : null;
  return nested && typeof payload.type === 'string' ? { ...nested, type } : { ...payload, type };
}

/**
 * POSTs `body` as JSON to `url` and calls `onEvent` for each typed chat event until the stream
 * ends, `signal` aborts, or a `done` event arrives. Rejects with an Error whose `status` and
 * `message` are set when the server refuses the request before streaming.
 */
export async function streamServerSentEvents({ url, method = 'POST', body, headers = {}, signal, onEvent }) {
  const response = await fetch(url, {
    method,
    headers: { Accept: 'text/event-stream', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: 'no-store',
  });
  if (!response.ok) {
    const error = new Error(await readErrorMessage(response));
    error.status = response.status;
    throw error;
  }
  if (!response.body) throw new Error('The browser could not read the answer stream.');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new EventStreamParser();
  let sawDone = false;
  const deliver = (rawEvents) => {
    for (const rawEvent of rawEvents) {
      const chatEvent = toChatEvent(rawEvent);
      if (chatEvent.type === 'done') sawDone = true;
      onEvent(chatEvent);
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      deliver(parser.push(value));
      if (sawDone) break;
    }
    if (!sawDone) deliver(parser.finish());
  } finally {
    reader.cancel().catch(() => {});
  }
  return { completed: sawDone };
}

/** Reads `{"error":{"message"}}` from a failed response, or describes the status in words. */
export async function readErrorMessage(response) {
  let text = '';
  try {
    text = await response.text();
    const parsed = JSON.parse(text);
    const message = parsed?.error?.message ?? parsed?.message ?? (typeof parsed?.error === 'string' ? parsed.error : null);
    if (message) return String(message);
  } catch {
    // not JSON: fall back to the status
  }
  return describeHttpStatus(response.status, text);
}

/** A plain-words description of an HTTP status for when the server gave no message. */
export function describeHttpStatus(status, bodyText = '') {
  const known = {
    400: 'The request was not accepted',
    401: 'Your token was not accepted. Sign in again',
    403: 'Your token does not allow this',
    404: 'Not found',
    409: 'Someone else changed this in the meantime. Reload and try again',
    413: 'That is too large to send',
    429: 'Too many requests. Wait a moment and try again',
    500: 'The server hit an internal error',
    502: 'An upstream service did not answer properly',
    503: 'The service is not available right now',
    504: 'An upstream service took too long to answer',
  };
  const base = known[status] ?? `The server answered with status ${status}`;
  const detail = bodyText && bodyText.length < 200 && !/^\s*</.test(bodyText) ? `: ${bodyText.trim()}` : '';
  return `${base}${detail}.`.replace(/\.\.$/, '.');
}
