// Browser tests of the UI's editors for APIs that had none: the Assistants page (buds: create,
// edit, delete, pick in the chat). Against the real
// `switchboard serve` binary (SQLite in a temp dir, the offline planner) in headless Chromium.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, serveWebFromDiskWhenAsked, startSwitchboard } from './support/switchboard.js';

let switchboard;
let browser;
let page;
let pageErrors;

async function newSignedInPage(token) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await serveWebFromDiskWhenAsked(context);
  await context.addInitScript((value) => sessionStorage.setItem('switchboard.token', value), token);
  return context.newPage();
}

before(async () => {
  switchboard = await startSwitchboard();
  browser = await launchChromium();
  page = await newSignedInPage(switchboard.token);
  pageErrors = watchPageErrors(page);
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
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
  await page.locator('nav').getByRole('link', { name: 'Assistants' }).click();
  await page.getByRole('heading', { name: 'Assistants' }).waitFor();
  await page.getByText('No assistants yet').waitFor();
  await page.getByRole('button', { name: '+ New assistant' }).click();
  const dialog = page.locator('dialog[open]');
  // Providers come from GET /api/llm/providers: the default one is the offline planner.
  const provider = dialog.getByLabel('Provider');
  await provider.locator('option', { hasText: /^default \(offline/ }).waitFor({ state: 'attached' });
  await dialog.getByText('The offline planner needs no model.').waitFor();
  await dialog.getByLabel('Name').fill('Schema keeper');
  await dialog.getByLabel('System prompt').fill('You keep track of the knowledge graph’s schema.');
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
  const memberPage = await newSignedInPage(memberToken.plaintext);
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

test('no script errors on the editors’ pages', () => {
  assert.deepEqual(pageErrors.filter((error) => !/Failed to load resource/.test(error)), []);
});
