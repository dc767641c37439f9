// Browser test of "My tokens" against the real binary: a member (not an admin) opens the page,
// is offered only the scopes they hold, creates a token whose secret is shown once and works,
// then revokes it and it stops working.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/chromium.js';
import { apiCall, newSignedInPage, startBrowserSession } from './support/switchboard.js';

let session;

before(async () => {
  session = await startBrowserSession();
});

after(async () => {
  await session?.close();
});

test('my tokens: a member creates a token within their scopes, sees it once, and revokes it', async () => {
  const { switchboard, browser } = session;
  const member = await apiCall(switchboard, 'POST', '/api/users', { name: 'dana', role: 'member' });
  const memberId = member.id ?? member.user?.id;
  const issued = await apiCall(switchboard, 'POST', '/api/tokens', { name: 'dana browser', scopes: ['chat:use', 'servers:read'], user_id: memberId });
  const page = await newSignedInPage(browser, issued.plaintext);
  await page.goto(`${switchboard.origin}/#/tokens`);
  await page.getByRole('heading', { name: 'My tokens' }).waitFor();
  const form = page.getByRole('form', { name: 'Create a token' });
  const offered = await form.locator('input[name=scope]').evaluateAll((boxes) => boxes.map((box) => box.value));
  assert.deepEqual(offered, ['chat:use', 'servers:read'], 'only the scopes the member holds');
  await form.getByLabel('Name').fill('ci pipeline');
  await form.getByLabel('chat:use').uncheck();
  await form.getByRole('button', { name: 'Create token' }).click();
  const secret = await page.locator('.token-secret').textContent();
  assert.match(secret, /^sb_/);
  const me = await fetch(`${switchboard.origin}/api/me`, { headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(me.status, 200);
  assert.deepEqual((await me.json()).scopes, ['servers:read']);
  const row = page.locator('tr[data-token="ci pipeline"]');
  await row.waitFor();
  assert.match(await row.textContent(), /servers:read/);
  await saveScreenshot(page, '41-my-tokens');
  await row.getByRole('button', { name: 'Revoke ci pipeline' }).click();
  await row.getByText(/^revoked/).waitFor();
  const after = await fetch(`${switchboard.origin}/api/me`, { headers: { Authorization: `Bearer ${secret}` } });
  assert.equal(after.status, 401, 'a revoked token stops at once');
  // The owner's tokens are not listed to the member.
  assert.equal(await page.locator('tr[data-token="owner"]').count(), 0);
  await page.context().close();
});
