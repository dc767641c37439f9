// Single sign-on, end to end, against a real OpenID Provider we did not write: panva's
// certified `oidc-provider` (support/oidc-provider.js), with Switchboard configured by an
// `[oidc]` section (client secret from SWITCHBOARD_OIDC_CLIENT_SECRET), `groups` mapped to
// roles and sign-in limited to example.com.
//
// In headless Chromium: Alice signs in with the provider, is created at her first sign-in as
// an admin (her `groups` claim), sees the UI as herself, and signs out — through the
// provider's end-session page (RP-initiated logout) — after which her cookie is refused;
// Carol, signed in the same way with no token, reads the Knowledge graph page.
// Over HTTP (the same flow, driven by hand): a forged `state`, a replayed callback, a tampered
// ID token, an ID token for another nonce (the provider asked for it), an expired one (signed
// again by the provider's key) and a disallowed e-mail domain are refused with no cookie; a cookie POST from
// another origin or without the CSRF header is refused; a member's session has no `admin`;
// deactivating a person ends their session on the very next request; and after the provider
// rotates its signing key the next sign-in is verified with the new one. Back-channel logout:
// Erin signs out at the provider and its signed logout token ends her session here; an
// unsigned or malformed token is refused.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchChromium, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, serveWebFromDiskWhenAsked, startSwitchboard } from './support/switchboard.js';
import { freePort } from './support/oauth-example-server.js';
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider } from './support/oidc-provider.js';

const PEOPLE = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice', groups: ['staff', 'sb-admins'] },
  bob: { email: 'bob@example.com', email_verified: true, name: 'Bob', groups: ['staff'] },
  carol: { email: 'carol@example.com', email_verified: true, name: 'Carol' },
  mallory: { email: 'mallory@elsewhere.test', email_verified: true, name: 'Mallory' },
  erin: { email: 'erin@example.com', email_verified: true, name: 'Erin', groups: ['staff'] },
};

let provider;
let switchboard;
let browser;
let configDirectory;

before(async () => {
  const [providerPort, switchboardPort] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${switchboardPort}`;
  provider = await startOidcProvider({ port: providerPort, switchboardOrigin: origin, people: PEOPLE });
  configDirectory = mkdtempSync(path.join(os.tmpdir(), 'switchboard-oidc-'));
  const configFile = path.join(configDirectory, 'switchboard.toml');
  writeFileSync(configFile, [
    '[oidc]',
    `issuer = "${provider.issuer}"`,
    `client_id = "${CLIENT_ID}"`,
    'display_name = "Test Provider"',
    'scopes = ["openid", "email", "profile", "groups"]',
    'role_claim = "groups"',
    'role_map = { "sb-admins" = "admin" }',
    'allowed_email_domains = ["example.com"]',
    '',
  ].join('\n'));
  switchboard = await startSwitchboard({
    bind: `127.0.0.1:${switchboardPort}`,
    env: { SWITCHBOARD_PUBLIC_URL: origin, SWITCHBOARD_CONFIG: configFile, SWITCHBOARD_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
  await provider?.stop();
  if (configDirectory) rmSync(configDirectory, { recursive: true, force: true });
});

/** A cookie jar per origin, for driving the flow over HTTP. */
function cookieJar() {
  const jars = new Map();
  return {
    header(url) {
      const jar = jars.get(new URL(url).origin) ?? new Map();
      return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    },
    keep(url, response) {
      const origin = new URL(url).origin;
      const jar = jars.get(origin) ?? new Map();
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair.indexOf('=');
        const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
        if (value) jar.set(name, value);
        else jar.delete(name);
      }
      jars.set(origin, jar);
    },
  };
}

async function send(url, jar, { method = 'GET', body } = {}) {
  const headers = { cookie: jar.header(url) };
  if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(url, { method, body, headers, redirect: 'manual' });
  jar.keep(url, response);
  return response;
}

/**
 * Goes from Switchboard's login through the provider's sign-in as `login`, and stops at the
 * redirect back to Switchboard: resolves to that callback URL (not yet visited).
 */
async function callbackFor(login, { nonce, jar = cookieJar() } = {}) {
  let url = `${switchboard.origin}/auth/oidc/login`;
  let request = {};
  for (let step = 0; step < 12; step += 1) {
    const response = await send(url, jar, request);
    if (response.status === 200 && url.includes('/interaction/')) {
      const action = (await response.text()).match(/action="([^"]+)"/)[1];
      url = new URL(action, url).href;
      request = { method: 'POST', body: new URLSearchParams({ login }).toString() };
      continue;
    }
    const location = response.headers.get('location');
    assert.ok(location, `${url} answered ${response.status} without a redirect: ${await response.text()}`);
    const next = new URL(location, url);
    if (next.href.startsWith(`${switchboard.origin}/auth/oidc/callback`)) return next.href;
    // A nonce other than the one Switchboard sent, given to the provider itself.
    if (nonce && next.searchParams.has('nonce')) next.searchParams.set('nonce', nonce);
    url = next.href;
    request = {};
  }
  throw new Error('the sign-in did not come back to Switchboard');
}

/** Visits a callback URL; resolves to `{location, session}` (the session cookie or null). */
async function visitCallback(url) {
  const response = await fetch(url, { redirect: 'manual' });
  assert.equal(response.status, 303);
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('sb_session='));
  return { location: response.headers.get('location'), session: cookie ? cookie.split(';')[0] : null };
}

async function signInOverHttp(login) {
  const outcome = await visitCallback(await callbackFor(login));
  assert.ok(outcome.session, `no session for ${login}: ${outcome.location}`);
  return outcome.session;
}

/** An API call with a session cookie (and the UI's CSRF header unless told otherwise). */
function withSession(session, method, apiPath, { body, origin = switchboard.origin, csrf = true } = {}) {
  const headers = { cookie: session, origin };
  if (csrf) headers['x-switchboard-csrf'] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${switchboard.origin}${apiPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

function ssoError(location) {
  assert.match(location, /#\/signin\?sso_error=/);
  return decodeURIComponent(location.split('sso_error=')[1].replace(/\+/g, ' '));
}

test('in the browser: sign in with the provider, land as an admin from the groups claim, sign out through the provider', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await serveWebFromDiskWhenAsked(context);
  const page = await context.newPage();
  const errors = watchPageErrors(page);
  await page.goto(`${switchboard.origin}/`);
  const button = page.getByRole('link', { name: 'Sign in with Test Provider' });
  await button.waitFor();
  assert.ok(await page.locator('#token-input').isVisible(), 'the token sign-in stays');
  await button.click();
  await page.getByLabel('Who are you?').fill('alice');
  await page.getByRole('button', { name: 'Sign in to the test provider' }).click();
  await page.waitForURL(`${switchboard.origin}/#/chat`);
  const nav = page.locator('.app-nav');
  await nav.getByText('alice@example.com').waitFor();
  await nav.getByText('Administrator').waitFor();
  await saveScreenshot(page, 'oidc-signed-in');
  const cookies = await context.cookies(switchboard.origin);
  const session = cookies.find((cookie) => cookie.name === 'sb_session');
  assert.ok(session?.httpOnly, 'the session cookie is HttpOnly');
  assert.equal(session.sameSite, 'Lax');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('switchboard.token')), null, 'no token in the page');

  const people = await apiCall(switchboard, 'GET', '/api/people');
  const alice = (people.people ?? people).find((person) => person.name === 'alice@example.com');
  assert.equal(alice?.role, 'admin', 'created at her first sign-in with the role her groups map to');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.href.startsWith(provider.issuer));
  await page.getByRole('button', { name: /yes/i }).click();
  await page.waitForURL((url) => url.href.startsWith(switchboard.origin));
  await page.getByRole('link', { name: 'Sign in with Test Provider' }).waitFor();
  const stale = await withSession(`sb_session=${session.value}`, 'GET', '/api/me');
  assert.equal(stale.status, 401, 'the ended session is refused');
  assert.deepEqual(errors, []);
  await context.close();
});

test('in the browser: a person signed in with the provider (no token) reads the Knowledge graph page', async () => {
  // The page reads /api/kg with the session cookie; make sure there is something to show.
  const typeName = 'SsoNote';
  const { schema } = await apiCall(switchboard, 'GET', '/api/kg/schema');
  if (!schema.object_types.some((type) => type.name === typeName)) {
    schema.object_types.push({ name: typeName, description: 'A note', properties: [{ name: 'title', type: 'string', required: true }] });
    await apiCall(switchboard, 'PUT', '/api/kg/schema', { schema, message: 'A note type for the single sign-on test' });
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await serveWebFromDiskWhenAsked(context);
  const page = await context.newPage();
  const errors = watchPageErrors(page);
  await page.goto(`${switchboard.origin}/`);
  await page.getByRole('link', { name: 'Sign in with Test Provider' }).click();
  await page.getByLabel('Who are you?').fill('carol');
  await page.getByRole('button', { name: 'Sign in to the test provider' }).click();
  await page.waitForURL(`${switchboard.origin}/#/chat`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('switchboard.token')), null, 'no token in the page');
  await page.locator('.app-nav').getByRole('link', { name: 'Knowledge graph' }).click();
  await page.locator('.kg-type').filter({ hasText: typeName }).waitFor();
  const { versions } = await apiCall(switchboard, 'GET', '/api/kg/versions');
  await page.locator('#kg-version', { hasText: versions[0].version }).waitFor();
  await page.getByRole('tab', { name: 'Changelog' }).click();
  await page.locator('#kg-panel table').getByText(typeName).first().waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'no refusal on the page');
  await saveScreenshot(page, 'oidc-knowledge-graph');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a member signs in without admin; deactivating them ends the session on the next request', async () => {
  const session = await signInOverHttp('bob');
  const me = await (await withSession(session, 'GET', '/api/me')).json();
  assert.equal(me.user.name, 'bob@example.com');
  assert.equal(me.user.role, 'member');
  assert.ok(!me.scopes.includes('admin'));
  assert.ok(me.scopes.includes('chat:use'));
  assert.equal((await withSession(session, 'GET', '/api/people')).status, 403);
  await apiCall(switchboard, 'PATCH', `/api/people/${me.user.id}`, { active: false });
  const after = await withSession(session, 'GET', '/api/me');
  assert.equal(after.status, 401);
  assert.match((await after.json()).error.message, /deactivated|ended/);
  const again = await visitCallback(await callbackFor('bob'));
  assert.equal(again.session, null);
  assert.match(ssoError(again.location), /deactivated/);
});

test('a forged state is refused, the real one works once, and a replay is refused', async () => {
  const callback = new URL(await callbackFor('carol'));
  const forged = new URL(callback);
  forged.searchParams.set('state', 'forged-state');
  const refused = await visitCallback(forged.href);
  assert.equal(refused.session, null);
  assert.match(ssoError(refused.location), /state/);
  const accepted = await visitCallback(callback.href);
  assert.ok(accepted.session);
  assert.equal(accepted.location, `${switchboard.origin}/#/chat`);
  const replayed = await visitCallback(callback.href);
  assert.equal(replayed.session, null);
  assert.match(ssoError(replayed.location), /state/);
  // Both the sign-in and the refusals are in the audit log.
  const audit = await apiCall(switchboard, 'GET', '/api/audit?action=auth.');
  const events = audit.entries;
  const signedIn = events.find((event) => event.action === 'auth.signed_in' && event.details?.name === 'carol@example.com');
  assert.equal(signedIn?.status, 'success', 'the sign-in is audited');
  const refusals = events.filter((event) => event.action === 'auth.sign_in_refused' && event.details?.code === 'unknown_state');
  assert.ok(refusals.length >= 2, `the forged and the replayed state are audited: ${JSON.stringify(events)}`);
});

test('a tampered ID token is refused', async () => {
  provider.tamperNextIdToken();
  const outcome = await visitCallback(await callbackFor('carol'));
  assert.equal(outcome.session, null);
  assert.match(ssoError(outcome.location), /ID token was refused/);
});

test('an ID token for another nonce is refused', async () => {
  const outcome = await visitCallback(await callbackFor('carol', { nonce: 'a-nonce-switchboard-never-sent' }));
  assert.equal(outcome.session, null);
  assert.match(ssoError(outcome.location), /ID token was refused: .*nonce/i);
});

test('an expired ID token, signed by the provider, is refused', async () => {
  const now = Math.floor(Date.now() / 1000);
  provider.reissueNextIdToken((claims) => ({ ...claims, iat: now - 600, exp: now - 300 }));
  const outcome = await visitCallback(await callbackFor('carol'));
  assert.equal(outcome.session, null);
  assert.match(ssoError(outcome.location), /ID token was refused: .*expired/i);
});

test('back-channel logout: signing out at the provider ends the person\'s sessions here', async () => {
  const jar = cookieJar();
  const { session } = await visitCallback(await callbackFor('erin', { jar }));
  assert.equal((await withSession(session, 'GET', '/api/me')).status, 200);
  // Erin signs out at the provider itself (its end-session page, confirmed), not through us.
  const confirm = await (await send(`${provider.issuer}/session/end`, jar)).text();
  const action = confirm.match(/action="([^"]+)"/)[1];
  const xsrf = confirm.match(/name="xsrf" value="([^"]+)"/)[1];
  await send(new URL(action, provider.issuer).href, jar, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
  let status = 200;
  for (let attempt = 0; attempt < 50 && status !== 401; attempt += 1) {
    status = (await withSession(session, 'GET', '/api/me')).status;
    if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(status, 401, 'the provider\'s logout token ended the session');
  const audit = await apiCall(switchboard, 'GET', '/api/audit?action=auth.logged_out');
  assert.ok(audit.entries.some((entry) => entry.details.name === 'erin@example.com' && entry.details.ended_sessions >= 1), JSON.stringify(audit.entries));
});

test('back-channel logout: an unsigned or malformed logout token is refused', async () => {
  const post = (token) => fetch(`${switchboard.origin}/auth/oidc/backchannel-logout`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }).toString(),
  });
  const piece = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: provider.issuer, aud: CLIENT_ID, iat: now, jti: 'x', sub: 'alice', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } };
  const unsigned = await post(`${piece({ alg: 'none' })}.${piece(claims)}.`);
  assert.equal(unsigned.status, 400);
  assert.match((await unsigned.json()).error.message, /algorithm `none`/);
  const malformed = await post('not-a-jwt');
  assert.equal(malformed.status, 400);
  assert.match((await malformed.json()).error.message, /not a signed JWT/);
});

test('an e-mail address outside the allowed domains is refused', async () => {
  const outcome = await visitCallback(await callbackFor('mallory'));
  assert.equal(outcome.session, null);
  assert.match(ssoError(outcome.location), /example\.com/);
  const people = await apiCall(switchboard, 'GET', '/api/people');
  assert.ok(!(people.people ?? people).some((person) => person.name.includes('mallory')), 'nobody was created');
});

test('a cookie POST from another origin or without the CSRF header is refused; the UI’s own works', async () => {
  const session = await signInOverHttp('alice');
  const body = { name: `Created by Alice ${Date.now()}`, role: 'member' };
  const crossSite = await withSession(session, 'POST', '/api/users', { body, origin: 'https://attacker.example' });
  assert.equal(crossSite.status, 403);
  const unmarked = await withSession(session, 'POST', '/api/users', { body, csrf: false });
  assert.equal(unmarked.status, 403);
  assert.match((await unmarked.json()).error.message, /X-Switchboard-CSRF/);
  const logoutCrossSite = await withSession(session, 'POST', '/auth/logout', { origin: 'https://attacker.example' });
  assert.equal(logoutCrossSite.status, 403);
  const own = await withSession(session, 'POST', '/api/users', { body });
  assert.equal(own.status, 201, await own.text());
  const logout = await withSession(session, 'POST', '/auth/logout');
  assert.equal(logout.status, 200);
  assert.match((await logout.json()).end_session_url, /\/session\/end\?/);
  assert.equal((await withSession(session, 'GET', '/api/me')).status, 401);
});

test('after the provider rotates its signing key, the next sign-in is verified with the new key', async () => {
  await signInOverHttp('carol');
  provider.rotateKeys();
  const session = await signInOverHttp('carol');
  assert.equal((await withSession(session, 'GET', '/api/me')).status, 200);
});
