// session: the signed-in token and the identity it resolves to. The token lives in
// sessionStorage only (gone when the tab closes, never in localStorage or a cookie), so it is
// never sent anywhere except in the Authorization header of our own API calls. A person who
// signed in with single sign-on has no token here: the server's HttpOnly session cookie
// authenticates them, and every call carries the X-Switchboard-CSRF header the server asks of
// cookie-authenticated changes.

const TOKEN_KEY = 'switchboard.token';
const listeners = new Set();
let currentIdentity = null;
let cookieSession = false;

/** True when the server set its session cookie (its readable companion `sb_signed_in` says so). */
export function mayHaveCookieSession() {
  return document.cookie.split(';').some((part) => part.trim() === 'sb_signed_in=1');
}

/** True when this tab is signed in by the single sign-on session cookie (no token). */
export function usesCookieSession() {
  return cookieSession;
}

/** Records that the session cookie signed this tab in. */
export function setCookieSession(on) {
  cookieSession = on;
}

/** The headers every API call sends: the bearer token when there is one, and the CSRF marker. */
export function authHeaders() {
  const token = getToken();
  return { 'X-Switchboard-CSRF': '1', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
}

/**
 * Signs out on the server too when the session cookie signed this tab in (POST /auth/logout),
 * then goes to the provider's end-session page when it has one, else back to sign-in.
 */
export async function endSession() {
  if (!cookieSession) {
    signOut();
    return;
  }
  let answer = null;
  try {
    const response = await fetch('/auth/logout', { method: 'POST', headers: { 'X-Switchboard-CSRF': '1', Accept: 'application/json' }, cache: 'no-store' });
    if (response.ok) answer = await response.json();
  } catch {
    // the server is unreachable: the cookie stays until it expires; sign the tab out anyway
  }
  signOut();
  if (answer?.end_session_url) location.assign(answer.end_session_url);
}

/** The bearer token of this tab, or null when signed out. */
export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Stores the token for this tab. */
export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Forgets the token without telling anyone (a failed sign-in attempt). */
export function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage unavailable: nothing to remove
  }
}

/** Forgets the token and identity and tells listeners (the router goes to sign-in). */
export function signOut(reason = '') {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage unavailable: nothing to remove
  }
  currentIdentity = null;
  cookieSession = false;
  for (const listener of listeners) listener({ signedIn: false, reason });
}

/** Records who the token belongs to (from GET /api/me). */
export function setIdentity(identity) {
  currentIdentity = identity;
  for (const listener of listeners) listener({ signedIn: true, identity });
}

/** The identity from GET /api/me, or null before sign-in. */
export function getIdentity() {
  return currentIdentity;
}

/** True when the identity's scopes include `scope` (or `admin`, which implies every scope). */
export function hasScope(scope) {
  const scopes = currentIdentity?.scopes ?? [];
  return scopes.includes(scope) || scopes.includes('admin');
}

/** Subscribes to sign-in/sign-out changes; returns an unsubscribe function. */
export function onSessionChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
