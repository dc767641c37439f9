// Browser tests of the UI's editors for APIs that had none: the Assistants page (buds: create,
// edit, delete, pick in the chat), the servers page's Import dialog (preview, then import of a
// pasted MCP client configuration) and a server's per-user credentials form. Against the real
// `switchboard serve` binary (SQLite in a temp dir, the offline planner) in headless Chromium.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { repositoryRoot, saveScreenshot } from './support/chromium.js';
import { apiCall, newSignedInPage, startBrowserSession } from './support/switchboard.js';
import { fillBudForm, openNewBudDialog } from './support/bud-editor.js';

const everythingServerScript = path.join(repositoryRoot, 'interop', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

let switchboard;
let browser;
let page;
let pageErrors;
let session;

before(async () => {
  session = await startBrowserSession();
  ({ switchboard, browser, page, pageErrors } = session);
});

after(async () => {
  await session?.close();
});

/** Opens `hash` in a fresh document (no dialog left open by an earlier test). */
async function openPage(hash) {
  await page.goto(`${switchboard.origin}/${hash}`);
  await page.reload();
}

async function serverNamed(name) {
  const { servers } = await apiCall(switchboard, 'GET', '/api/mcp/servers');
  return servers.find((server) => server.name === name) ?? null;
}

/** Waits until the built-in kg server's tools are known (a forced tool is checked against them). */
async function kgSynced() {
  const kg = await serverNamed('kg');
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const capabilities = await apiCall(switchboard, 'GET', `/api/mcp/servers/${kg.id}/capabilities`);
    if ((capabilities.tools ?? []).length > 0) return kg;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the kg server never listed its tools');
}

test('assistants: a bud created in the editor is picked in the chat and answers; the API’s refusal is shown in its words', async () => {
  const kg = await kgSynced();
  await openPage('#/chat');
  const dialog = await openNewBudDialog(page);
  await page.getByText('No assistants yet').waitFor();
  // Providers come from GET /api/llm/providers: the default one is the offline planner.
  const provider = dialog.getByLabel('Provider');
  await provider.locator('option', { hasText: /^default \(offline/ }).waitFor({ state: 'attached' });
  await dialog.getByText('The offline planner needs no model.').waitFor();
  await fillBudForm(dialog, { name: 'Schema keeper', systemPrompt: 'You keep track of the knowledge graph’s schema.' });
  await dialog.getByLabel('MCP servers').selectOption('some');
  await dialog.getByRole('group', { name: 'Servers this assistant uses' }).getByLabel('kg', { exact: true }).check();
  // A forced tool the kg server does not have: the API refuses it, naming it, and the dialog says so.
  await dialog.getByLabel('Tool choice').selectOption('function');
  await dialog.getByLabel('Tool to call').fill('kg.no_such_tool');
  await dialog.getByRole('button', { name: 'Create assistant' }).click();
  await dialog.getByRole('alert').filter({ hasText: "the forced tool 'kg.no_such_tool' does not exist" }).waitFor();
  await saveScreenshot(page, '20-bud-editor-refused');
  assert.deepEqual((await apiCall(switchboard, 'GET', '/api/buds')).buds, [], 'nothing was created');
  await dialog.getByLabel('Tool choice').selectOption('auto');
  await dialog.getByRole('button', { name: 'Create assistant' }).click();
  await dialog.waitFor({ state: 'detached' });
  const card = page.locator('.bud-card[data-bud-name="Schema keeper"]');
  await card.waitFor();
  const [bud] = (await apiCall(switchboard, 'GET', '/api/buds')).buds;
  assert.equal(bud.name, 'Schema keeper');
  assert.equal(bud.system_prompt, 'You keep track of the knowledge graph’s schema.');
  assert.equal(bud.provider, null);
  assert.deepEqual(bud.mcp_config, { servers: [kg.id] });
  assert.match(await card.textContent(), /servers: kg/);
  await saveScreenshot(page, '21-assistants');

  // Chat with it: the link opens the chat with this assistant chosen, and it answers.
  await card.getByRole('link', { name: 'Chat with it' }).click();
  const select = page.getByLabel('Assistant', { exact: true });
  await page.waitForFunction((id) => document.getElementById('bud-select')?.value === id, bud.id);
  await page.fill('#chat-input', "What's the schema version?");
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').last();
  await turn.locator('.tool-call').filter({ hasText: 'schema_version' }).first().waitFor();
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 30000 });
  const answer = (await turn.locator('.answer').textContent()).trim();
  assert.ok(answer.length > 10, `the assistant answered: "${answer}"`);
  const conversationId = decodeURIComponent(new URL(page.url()).hash.replace(/^#\/chat\//, ''));
  const { conversation } = await apiCall(switchboard, 'GET', `/chat/conversations/${encodeURIComponent(conversationId)}`);
  assert.equal(conversation.bud_id, bud.id, 'the conversation is the assistant’s');
  assert.equal(await select.inputValue(), bud.id);
  await saveScreenshot(page, '22-bud-answers');

  // Edit: the form opens with what is stored; the change is saved as sent.
  await page.goto(`${switchboard.origin}/#/buds`);
  await card.getByRole('button', { name: 'Edit' }).click();
  const editor = page.locator('dialog[open]');
  assert.equal(await editor.getByLabel('Name').inputValue(), 'Schema keeper');
  assert.equal(await editor.getByLabel('MCP servers').inputValue(), 'some');
  assert.equal(await editor.getByRole('group', { name: 'Servers this assistant uses' }).getByLabel('kg', { exact: true }).isChecked(), true);
  await editor.getByLabel('System prompt').fill('Answer only about schema versions.');
  await editor.getByLabel('Tool choice').selectOption('function');
  // The workspace's tools are offered as suggestions for the forced tool.
  await editor.locator('datalist option[value="kg.schema_version"]').waitFor({ state: 'attached' });
  await editor.getByLabel('Tool to call').fill('kg.schema_version');
  await editor.getByRole('button', { name: 'Save changes' }).click();
  await editor.waitFor({ state: 'detached' });
  await card.getByText('always calls kg.schema_version').waitFor();
  const edited = await apiCall(switchboard, 'GET', `/api/buds/${bud.id}`);
  assert.equal(edited.system_prompt, 'Answer only about schema versions.');
  assert.deepEqual(edited.mcp_config, { servers: [kg.id], tool_choice: { function: 'kg.schema_version' } });

  // Another member sees it and may chat with it, but not change it (the API would refuse: 403).
  const member = await apiCall(switchboard, 'POST', '/api/users', { name: 'bud reader' });
  const memberToken = await apiCall(switchboard, 'POST', '/api/tokens', { name: 'bud reader', scopes: ['chat:use'], user_id: member.id ?? member.user?.id });
  const memberPage = await newSignedInPage(browser, memberToken.plaintext);
  try {
    await memberPage.goto(`${switchboard.origin}/#/buds`);
    const memberCard = memberPage.locator('.bud-card[data-bud-name="Schema keeper"]');
    await memberCard.getByRole('link', { name: 'Chat with it' }).waitFor();
    assert.equal(await memberCard.getByRole('button', { name: 'Edit' }).isDisabled(), true);
    assert.equal(await memberCard.getByRole('button', { name: 'Delete' }).getAttribute('title'), 'Only its creator or an administrator can change it.');
  } finally {
    await memberPage.context().close();
  }

  // Delete, after a confirmation.
  await card.getByRole('button', { name: 'Delete' }).click();
  await card.getByRole('button', { name: 'Delete Schema keeper' }).click();
  await card.waitFor({ state: 'detached' });
  assert.deepEqual((await apiCall(switchboard, 'GET', '/api/buds')).buds, []);
});

test('import: a pasted Cursor config is previewed (nothing stored), then its stdio server is registered and connects', async () => {
  const config = {
    mcpServers: {
      'everything-imported': { command: process.execPath, args: [everythingServerScript, 'stdio'], autoApprove: ['echo'] },
      'with-token': { command: process.execPath, args: [everythingServerScript, 'stdio'], env: { API_TOKEN: '${env:EVERYTHING_TOKEN}' } },
      metadata: { type: 'http', url: 'http://169.254.169.254/latest/meta-data' },
      kg: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
    },
  };
  await openPage('#/servers');
  await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
  await page.getByRole('button', { name: 'Import…' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByLabel('Configuration file').fill(JSON.stringify(config, null, 2));
  await dialog.getByRole('button', { name: 'Preview' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Cursor file (detected): 2 to add, 0 to replace, 2 skipped. Nothing is stored yet.' }).waitFor();
  const row = (name) => dialog.locator(`tr[data-entry="${name}"]`);
  assert.equal(await row('everything-imported').getAttribute('data-action'), 'create');
  assert.match(await row('everything-imported').textContent(), /will be added/);
  assert.match(await row('everything-imported').textContent(), /Not used: autoApprove/);
  assert.match(await row('with-token').textContent(), /Each person fills in: EVERYTHING_TOKEN/);
  assert.match(await row('metadata').textContent(), /skipped.*The URL policy refuses this address/);
  assert.match(await row('kg').textContent(), /skipped.*A server of this workspace has that name/);
  await saveScreenshot(page, '23-import-preview');
  assert.equal(await serverNamed('everything-imported'), null, 'a preview stores nothing');

  await dialog.getByRole('button', { name: 'Import 2 servers' }).click();
  await dialog.getByRole('status').filter({ hasText: 'Imported: 2 added, 0 replaced, 2 skipped.' }).waitFor();
  await dialog.getByRole('button', { name: 'Done' }).click();
  const card = page.locator('[data-server-name="everything-imported"]');
  await card.getByRole('button', { name: 'Test connection' }).click();
  await card.locator('.status-dot[data-status="green"]').waitFor({ timeout: 30000 });
  const imported = await serverNamed('everything-imported');
  assert.equal(imported.transport, 'stdio');
  assert.equal(imported.command, process.execPath);
  assert.equal((await serverNamed('kg')).url.includes('127.0.0.1:9/'), false, 'the existing kg server is untouched');
  await saveScreenshot(page, '24-imported');
});

test('user credentials: a server with user fields asks each person for their own, write-only values', async () => {
  const secret = `personal-${Date.now()}`;
  const created = await apiCall(switchboard, 'POST', '/api/mcp/servers', {
    name: 'personal', transport: 'stdio', command: process.execPath, args: [everythingServerScript, 'stdio'],
    env: { API_TOKEN: '{{user.API_TOKEN}}' },
    auth: { user_fields: { API_TOKEN: { title: 'Personal API token', description: 'From your account settings.', secret: true } } },
  });
  const serverId = created.id ?? created.server?.id;
  await openPage('#/servers');
  const card = page.locator('[data-server-name="personal"]');
  const form = card.getByRole('form', { name: 'Your credentials for personal' });
  await form.waitFor();
  await card.getByText('Your credentials — 1 of 1 not set').waitFor();
  // Without the value, a connection for this person is refused, naming the field.
  await card.getByRole('button', { name: 'Test connection' }).click();
  await card.getByText('Connection failed:').first().waitFor();
  assert.match(await card.textContent(), /needs your own credentials.*Personal API token/s, 'the refusal names the field');
  const input = form.locator('input[name=API_TOKEN]');
  assert.match(await input.evaluate((element) => element.labels[0].textContent), /^Personal API token/);
  assert.equal(await input.getAttribute('type'), 'password', 'a secret field is a password input');
  await input.fill(secret);
  await saveScreenshot(page, '25-user-credentials');
  await form.getByRole('button', { name: 'Save my credentials' }).click();
  await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  await card.getByText('Your credentials — all set').waitFor();
  assert.equal(await input.inputValue(), '', 'the value is not kept in the page');
  const stored = await apiCall(switchboard, 'GET', `/api/mcp/servers/${serverId}`);
  assert.deepEqual((stored.server ?? stored).auth.user_fields.map((field) => [field.name, field.is_set]), [['API_TOKEN', true]]);
  // With it, this person's connection starts.
  await card.getByRole('button', { name: 'Test connection' }).click();
  await card.getByText(/^Connected to mcp-servers\/everything .*tools\.$/).waitFor({ timeout: 30000 });
  await page.reload();
  await card.getByText('Your credentials — all set').waitFor();
  assert.equal(await card.locator('details.user-credentials-details').evaluate((details) => details.open), false, 'folded once everything is set');
  assert.equal((await page.content()).includes(secret), false, 'the value is never sent back to the page');

  // Another person has not set theirs: their form says so.
  const user = await apiCall(switchboard, 'POST', '/api/users', { name: 'second person' });
  const token = await apiCall(switchboard, 'POST', '/api/tokens', { name: 'second person', scopes: ['chat:use', 'servers:read'], user_id: user.id ?? user.user?.id });
  const otherPage = await newSignedInPage(browser, token.plaintext);
  try {
    await otherPage.goto(`${switchboard.origin}/#/servers`);
    const otherCard = otherPage.locator('[data-server-name="personal"]');
    await otherCard.getByText('Your credentials — 1 of 1 not set').waitFor();
    await otherCard.getByRole('button', { name: 'Forget your Personal API token' }).waitFor({ state: 'hidden' });
  } finally {
    await otherPage.context().close();
  }

  // Forget: the value is cleared for this person.
  await card.locator('summary', { hasText: 'Your credentials' }).click();
  await form.getByRole('button', { name: 'Forget your Personal API token' }).click();
  await card.getByText('Your credentials — 1 of 1 not set').waitFor();
  const after = await apiCall(switchboard, 'GET', `/api/mcp/servers/${serverId}`);
  assert.equal((after.server ?? after).auth.user_fields[0].is_set, false);
});

test('no script errors on the editors’ pages', () => {
  assert.deepEqual(pageErrors.filter((error) => !/Failed to load resource/.test(error)), []);
});
