// api: JSON calls to the Switchboard HTTP API with the tab's bearer token. Every failure becomes
// an ApiError whose message is in plain words (the server's own message when it sent one), and a
// 401 signs the tab out so the user is asked for a token again.

import { authHeaders, getToken, signOut } from './session.js';
import { readErrorMessage } from './sse.js';

/** A failed API call: `status` is the HTTP status (0 when the server could not be reached). */
export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

/** Calls the API; resolves to parsed JSON (or null for an empty answer). */
export async function apiRequest(method, path, body, { signal, token = getToken(), signOutOn401 = true } = {}) {
  const headers = { Accept: 'application/json', 'X-Switchboard-CSRF': authHeaders()['X-Switchboard-CSRF'] };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, cache: 'no-store' });
  } catch (cause) {
    if (cause?.name === 'AbortError') throw cause;
    throw new ApiError('Cannot reach the Switchboard server. Check that it is running and try again.', 0, 'network');
  }
  if (!response.ok) {
    const code = await peekErrorCode(response);
    const message = await readErrorMessage(response);
    if (response.status === 401 && signOutOn401) signOut('Your session ended or the token was revoked. Sign in again.');
    throw new ApiError(message, response.status, code);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('The server sent an answer this page cannot read.', response.status, 'bad_json');
  }
}

async function peekErrorCode(response) {
  try {
    const parsed = await response.clone().json();
    return parsed?.error?.code ?? null;
  } catch {
    return null;
  }
}

/** Shorthands. */
export const api = {
  get: (path, options) => apiRequest('GET', path, undefined, options),
  post: (path, body = {}, options) => apiRequest('POST', path, body, options),
  put: (path, body, options) => apiRequest('PUT', path, body, options),
  patch: (path, body, options) => apiRequest('PATCH', path, body, options),
  delete: (path, options) => apiRequest('DELETE', path, undefined, options),
};

/** The array of a list answer under its one field name (`[]` when absent). */
export function listItems(answer, key) {
  return Array.isArray(answer?.[key]) ? answer[key] : [];
}

/** Percent-encodes one path segment. */
export const segment = (value) => encodeURIComponent(String(value));
