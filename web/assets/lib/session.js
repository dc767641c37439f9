// session: the signed-in token and the identity it resolves to. The token lives in
// sessionStorage only (gone when the tab closes, never in localStorage or a cookie), so it is
// never sent anywhere except in the Authorization header of our own API calls.

const TOKEN_KEY = 'switchboard.token';
const listeners = new Set();
let currentIdentity = null;

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
