// OAuth in the browser, end to end, against a real OAuth-protected MCP server we did not write:
// the TypeScript SDK's example server and its demo authorization server. An admin registers it
// as `per_user` (each person connects their own account). The owner clicks Connect on the
// Servers page, goes through the authorization server (discovery, registration, PKCE) and comes
// back to Switchboard connected, with the server's tools listed; a chat answer then calls one of
// them as the owner. A member who has not connected gets a Connect card in the chat and none of
// the owner's tools, connects from that card and then has the tools too. After Disconnect the
// owner's server needs sign-in again, and the member's connection is untouched.
// (Refreshing an expiring or refused token is proven over HTTP by the server's `oauth::refresh`
// tests: this demo authorization server issues hour-long tokens.)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { freePort, startOAuthExampleServer } from './support/oauth-example-server.js';

const SERVER_NAME = 'greeter';
const QUESTION = 'Greet "Ada Lovelace"';

let example;
let switchboard;
let browser;
let serverId;
let member;
const pages = [];

before(async () => {
  example = await startOAuthExampleServer();
  // The redirect URI is built from the public URL, so the port is chosen before the start.
  const port = await freePort();
  switchboard = await startSwitchboard({ bind: `127.0.0.1:${port}`, env: { SWITCHBOARD_PUBLIC_URL: `http://127.0.0.1:${port}` } });
  browser = await launchChromium();
  const created = await apiCall(switchboard, 'POST', '/api/mcp/servers', {
    name: SERVER_NAME,
    transport: 'streamable_http',
    url: example.mcpUrl,
    auth: { mode: 'oauth', credential_scope: 'per_user' },
  });
  serverId = (created.server ?? created).id;
  const user = await apiCall(switchboard, 'POST', '/api/users', { name: 'Grace', role: 'member' });
  member = await apiCall(switchboard, 'POST', '/api/tokens', { name: 'Grace in the browser', scopes: ['chat:use', 'servers:read'], user_id: user.id });
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
  await example?.stop();
});

/** A signed-in page of its own (its own session storage) for `token`, with its errors watched. */
async function signedInPage(token) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.addInitScript((value) => sessionStorage.setItem('switchboard.token', value), token);
  const page = await context.newPage();
  pages.push({ page, errors: watchPageErrors(page) });
  return page;
}

function serverCard(page) {
  return page.locator(`[data-server-name="${SERVER_NAME}"]`);
}

/**
 * Asks `question` in a new conversation; resolves to the finished answer. With `approve`, the
 * tool call waits for the person (new tools are `ASK_USER` by default), who approves it once.
 */
async function ask(page, question, { approve = false } = {}) {
  await page.goto(`${switchboard.origin}/#/chat`);
  await page.getByRole('button', { name: '+ New conversation' }).click();
  const answersBefore = await page.locator('.message-assistant').count();
  await page.fill('#chat-input', question);
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').nth(answersBefore);
  await turn.waitFor();
  if (approve) {
    const approval = turn.locator('.approval-card');
    await approval.waitFor();
    assert.match(await approval.textContent(), /greet/);
    await approval.getByRole('button', { name: 'Approve once' }).click();
  }
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 30000 });
  return turn;
}

/** Waits until the window is back on Switchboard's servers page with the sign-in's outcome. */
async function backFromSignIn(page) {
  await page.waitForURL((url) => url.origin === switchboard.origin && url.hash.startsWith('#/servers?oauth='), { timeout: 30000 });
  const result = page.locator('.oauth-result [data-oauth]');
  await result.waitFor();
  return result;
}

let owner;

test('oauth: the owner clicks Connect, signs in at the authorization server and comes back connected', async () => {
  owner = await signedInPage(switchboard.token);
  await owner.goto(`${switchboard.origin}/#/servers`);
  const card = serverCard(owner);
  await card.waitFor();
  assert.equal((await card.locator('.status-label').textContent()).trim(), 'Needs sign-in');
  await saveScreenshot(owner, 'oauth-01-needs-sign-in');

  const authorizationRequest = owner.waitForRequest((request) => request.url().startsWith(`${example.authorizationServer}/authorize`));
  await card.getByRole('button', { name: `Connect ${SERVER_NAME}` }).click();
  const sent = new URL((await authorizationRequest).url());
  assert.equal(sent.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(sent.searchParams.get('redirect_uri'), `${switchboard.origin}/oauth/callback`);
  assert.equal(sent.searchParams.get('resource'), example.mcpUrl);

  const result = await backFromSignIn(owner);
  assert.equal(await result.getAttribute('data-oauth'), 'connected', await result.textContent());
  assert.match(await result.textContent(), new RegExp(`Connected to ${SERVER_NAME}`));
  await card.getByRole('button', { name: 'Disconnect' }).waitFor();
  await card.locator('summary').filter({ hasText: 'Tools' }).click();
  await card.getByText('greet', { exact: true }).first().waitFor();
  await saveScreenshot(owner, 'oauth-02-connected');
});

test('oauth: a chat answer calls the server as the person who connected', async () => {
  const turn = await ask(owner, QUESTION, { approve: true });
  const call = turn.locator('.tool-call').filter({ hasText: 'greet' }).first();
  await call.waitFor();
  assert.equal(await call.getAttribute('data-status'), 'completed');
  assert.match(await turn.textContent(), /Hello, Ada Lovelace/);
  assert.equal(await turn.locator('.sign-in-card').count(), 0);
  await saveScreenshot(owner, 'oauth-03-chat-call');
});

test('oauth: a person who has not connected gets a Connect card and none of the tools, then connects from it', async () => {
  const page = await signedInPage(member.plaintext);
  const turn = await ask(page, QUESTION);
  const card = turn.locator('.sign-in-card');
  await card.waitFor();
  assert.equal(await turn.locator('.tool-call').filter({ hasText: 'greet' }).count(), 0);
  assert.doesNotMatch(await turn.textContent(), /Hello, Ada Lovelace/);
  await saveScreenshot(page, 'oauth-04-member-connect-card');

  await card.getByRole('button', { name: `Connect ${SERVER_NAME}` }).click();
  const result = await backFromSignIn(page);
  assert.equal(await result.getAttribute('data-oauth'), 'connected', await result.textContent());
  const again = await ask(page, QUESTION, { approve: true });
  await again.locator('.tool-call[data-status="completed"]').filter({ hasText: 'greet' }).first().waitFor();
  assert.match(await again.textContent(), /Hello, Ada Lovelace/);
});

test('oauth: after Disconnect the owner needs sign-in again, and the member stays connected', async () => {
  await owner.goto(`${switchboard.origin}/#/servers`);
  const card = serverCard(owner);
  await card.getByRole('button', { name: 'Disconnect' }).click();
  await card.getByRole('button', { name: `Connect ${SERVER_NAME}` }).waitFor();
  assert.equal((await card.locator('.status-label').textContent()).trim(), 'Needs sign-in');
  await saveScreenshot(owner, 'oauth-05-disconnected');

  const turn = await ask(owner, QUESTION);
  await turn.locator('.sign-in-card').waitFor();
  assert.equal(await turn.locator('.tool-call').filter({ hasText: 'greet' }).count(), 0);

  const memberView = await fetch(`${switchboard.origin}/api/mcp/servers/${serverId}`, { headers: { Authorization: `Bearer ${member.plaintext}` } }).then((response) => response.json());
  assert.equal((memberView.server ?? memberView).auth.connected, true);
});

test('oauth: no script errors on any page of the flow', () => {
  assert.deepEqual(pages.flatMap(({ errors }) => errors), []);
});
