// mcp: a minimal Model Context Protocol client over Streamable HTTP for the browser, used to read
// our own knowledge-graph server at /mcp with the tab's token — the same public interface any MCP
// client uses. Handles the initialize handshake, the session header, JSON or SSE answers, and ends
// the session when done. Only for our own origin.

import { getToken } from './session.js';
import { EventStreamParser, readErrorMessage } from './sse.js';

const PROTOCOL_VERSION = '2025-11-25';

/** An MCP error answer (JSON-RPC `error`), with its code and data. */
export class McpError extends Error {
  constructor(message, code, data) {
    super(message);
    this.name = 'McpError';
    this.code = code;
    this.data = data;
  }
}

/** A session with one MCP endpoint. */
export class McpHttpClient {
  constructor(url = '/mcp') {
    this.url = url;
    this.sessionId = null;
    this.protocolVersion = null;
    this.nextId = 1;
  }

  async #post(message) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const token = getToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (this.sessionId) headers['Mcp-Session-Id'] = this.sessionId;
    if (this.protocolVersion) headers['MCP-Protocol-Version'] = this.protocolVersion;
    const response = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(message), cache: 'no-store' });
    if (!response.ok) {
      const error = new Error(await readErrorMessage(response));
      error.status = response.status;
      throw error;
    }
    const sessionId = response.headers.get('Mcp-Session-Id');
    if (sessionId) this.sessionId = sessionId;
    if (message.id === undefined) return null;
    const contentType = response.headers.get('Content-Type') ?? '';
    if (contentType.includes('text/event-stream')) return this.#readAnswerFromStream(response, message.id);
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  }

  async #readAnswerFromStream(response, id) {
    const parser = new EventStreamParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        const events = done ? parser.finish() : parser.push(value);
        for (const event of events) {
          let parsed;
          try {
            parsed = JSON.parse(event.data);
          } catch {
            continue;
          }
          if (parsed?.id === id && ('result' in parsed || 'error' in parsed)) return parsed;
        }
        if (done) throw new Error('The knowledge-graph server closed the stream without answering.');
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  /** Sends a request and returns its result, or throws McpError. */
  async request(method, params = {}) {
    if (!this.protocolVersion && method !== 'initialize') await this.initialize();
    const answer = await this.#post({ jsonrpc: '2.0', id: this.nextId++, method, params });
    if (answer?.error) throw new McpError(answer.error.message ?? 'The server reported an error.', answer.error.code, answer.error.data);
    return answer?.result;
  }

  async initialize() {
    const result = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'switchboard-web', version: '0.1.0' },
    });
    this.protocolVersion = result?.protocolVersion ?? PROTOCOL_VERSION;
    await this.#post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  /** Calls a tool; returns its structured content (or parsed text); throws on isError. */
  async callTool(name, args = {}) {
    const result = await this.request('tools/call', { name, arguments: args });
    const text = (result?.content ?? []).filter((part) => part.type === 'text').map((part) => part.text).join('\n');
    if (result?.isError) throw new McpError(text || `${name} failed.`, 'tool_error');
    if (result?.structuredContent !== undefined) return result.structuredContent;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  /** Ends the session (best effort). */
  async close() {
    if (!this.sessionId) return;
    const headers = { 'Mcp-Session-Id': this.sessionId };
    const token = getToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    await fetch(this.url, { method: 'DELETE', headers }).catch(() => {});
    this.sessionId = null;
  }
}
