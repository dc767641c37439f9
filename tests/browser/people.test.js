// Browser test of removing a person from the People page against the real binary: the dialog
// asks what becomes of their conversations and offers Remove only once a choice is made; kept
// conversations become the admin's own (listed with theirs), deleted ones are gone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/chromium.js';
import { apiCall, startBrowserSession } from './support/switchboard.js';

let session;

before(async () => {
  session = await startBrowserSession();
});

after(async () => {
  await session?.close();
});

/** A member with a chat token and one conversation of theirs: `{id, conversationId}`. */
async function memberWithConversation(switchboard, name) {
  const member = await apiCall(switchboard, 'POST', '/api/users', { name, role: 'member' });
  const issued = await apiCall(switchboard, 'POST', '/api/tokens', { name: `${name} laptop`, scopes: ['chat:use'], user_id: member.id });
  const response = await fetch(`${switchboard.origin}/chat/conversations`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${issued.plaintext}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ title: `${name}'s findings` }),
  });
  assert.equal(response.status, 201);
  return { id: member.id, conversationId: (await response.json()).id };
}

/** Whether the admin's own conversation list has `conversationId`. */
async function ownerLists(switchboard, conversationId) {
  const response = await fetch(`${switchboard.origin}/chat/conversations`, { headers: { Authorization: `Bearer ${switchboard.token}` } });
  return (await response.json()).conversations.some((conversation) => conversation.id === conversationId);
}

async function ownerReads(switchboard, conversationId) {
  const response = await fetch(`${switchboard.origin}/chat/conversations/${encodeURIComponent(conversationId)}`, {
    headers: { Authorization: `Bearer ${switchboard.token}` },
  });
  return response.status;
}

test('people: removing a person asks whether their conversations are kept (they become the admin\'s) or deleted', async () => {
  const { switchboard, page } = session;
  const quinn = await memberWithConversation(switchboard, 'quinn@example.com');
  const rory = await memberWithConversation(switchboard, 'rory@example.com');
  assert.equal(await ownerLists(switchboard, quinn.conversationId), false, 'not the admin\'s before');

  await page.goto(`${switchboard.origin}/#/people`);
  await page.locator('tr[data-person="quinn@example.com"]').getByRole('button', { name: 'Remove quinn@example.com' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove quinn@example.com' });
  await dialog.waitFor();
  const remove = dialog.getByRole('button', { name: 'Remove', exact: true });
  assert.equal(await remove.isDisabled(), true, 'no choice is made for the admin');
  await dialog.getByLabel('Keep their conversations').check();
  await saveScreenshot(page, '15b-people-remove');
  await remove.click();
  await page.getByText('quinn@example.com removed. 1 conversation is now yours.').waitFor();
  await page.locator('tr[data-person="quinn@example.com"]').waitFor({ state: 'detached' });
  assert.equal(await ownerLists(switchboard, quinn.conversationId), true, 'kept: now among the admin\'s own');
  assert.equal(await ownerReads(switchboard, quinn.conversationId), 200, 'kept: the admin reads it');

  await page.locator('tr[data-person="rory@example.com"]').getByRole('button', { name: 'Remove rory@example.com' }).click();
  const second = page.getByRole('dialog', { name: 'Remove rory@example.com' });
  await second.getByLabel('Delete their conversations').check();
  await second.getByRole('button', { name: 'Remove', exact: true }).click();
  await page.getByText('rory@example.com removed with their conversations.').waitFor();
  assert.equal(await ownerReads(switchboard, rory.conversationId), 404, 'deleted with the person');

  const audit = await apiCall(switchboard, 'GET', '/api/audit?action=user.deleted');
  const entries = audit.entries.map((entry) => entry.details);
  assert.deepEqual(entries.map((details) => [details.name, details.conversations, details.transferred_conversations]).sort(),
    [['quinn@example.com', 'keep', 1], ['rory@example.com', 'delete', 0]]);
});
