// Resources and prompts in the chat (issue 12), in headless Chromium against the real binary,
// `@modelcontextprotocol/server-everything` (software we did not write) and a fake
// OpenAI-compatible model that records what it is sent: a person attaches a static resource and a
// resource template filled in with the server's completion, asks, and the model gets both
// resources' contents with the question; then runs a prompt from the slash menu (`/` lists
// `/server:prompt`, its argument form completes from the server) and the model gets the prompt's
// message before it answers. Reloading shows the attachments and the prompt in the transcript.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { repositoryRoot, saveScreenshot } from './support/chromium.js';
import { apiCall, startBrowserSession } from './support/switchboard.js';
import { startFakeOpenAi } from './support/fake-openai-server.js';

const everythingServerScript = path.join(repositoryRoot, 'interop', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

let fake;
let session;
let switchboard;
let page;
let pageErrors;

before(async () => {
  fake = await startFakeOpenAi();
  session = await startBrowserSession({
    env: { SWITCHBOARD_LLM_PROVIDER: 'openai', SWITCHBOARD_LLM_BASE_URL: fake.baseUrl('house'), SWITCHBOARD_LLM_MODEL: 'house-model' },
  });
  ({ switchboard, page, pageErrors } = session);
  const server = await apiCall(switchboard, 'POST', '/api/mcp/servers', { name: 'everything', transport: 'stdio', command: process.execPath, args: [everythingServerScript, 'stdio'] });
  await apiCall(switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
});

after(async () => {
  await session?.close();
  await fake?.close();
});

/** The last user message of the model's last request. */
function lastQuestionSent() {
  const { messages } = fake.requests[fake.requests.length - 1].body;
  const question = messages.filter((message) => message.role === 'user').pop();
  return typeof question.content === 'string' ? question.content : question.content.map((part) => part.text ?? '').join('');
}

async function waitForAnswer(before) {
  const turn = page.locator('.message-assistant').nth(before);
  await turn.waitFor({ timeout: 30000 });
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 30000 });
}

test('resources: attach a resource and a filled-in template, and the model reads them with the question', async () => {
  await page.goto(`${switchboard.origin}/#/chat`);
  await page.getByRole('button', { name: '+ New conversation' }).click();
  await page.getByRole('button', { name: 'Attach' }).click();
  await page.locator('.resource-option[data-uri="demo://resource/static/document/architecture.md"]').click();
  await page.getByRole('button', { name: 'Attach' }).click();
  await page.locator('.template-option[data-uri-template="demo://resource/dynamic/text/{resourceId}"]').click();
  const resourceId = page.getByLabel('resourceId (required)');
  await resourceId.fill('7');
  await page.locator('datalist option[value="7"]').waitFor({ state: 'attached', timeout: 10000 });
  await saveScreenshot(page, 'resources-01-template');
  await page.getByRole('button', { name: 'Attach resource' }).click();
  assert.equal(await page.locator('.composer .attachment-chip').count(), 2);

  const requestsBefore = fake.requests.length;
  await page.fill('#chat-input', 'Summarise these');
  await page.keyboard.press('Enter');
  await waitForAnswer(0);
  assert.equal(fake.requests.length, requestsBefore + 1);
  const question = lastQuestionSent();
  assert.ok(question.startsWith('Summarise these'), question);
  assert.match(question, /<resource uri="demo:\/\/resource\/static\/document\/architecture\.md" mime_type="text\/markdown">/);
  assert.match(question, /Resource 7: This is a plaintext resource/);
  assert.equal(await page.locator('.composer .attachment-chip').count(), 0, 'sent attachments leave the composer');
  assert.equal(await page.locator('.message-user .attachment-chip').count(), 2);
});

test('prompts: run a prompt from the slash menu with completed arguments, and its message reaches the model', async () => {
  await page.fill('#chat-input', '/compl');
  const option = page.locator('.slash-option[data-command="/everything:completable-prompt"]');
  await option.waitFor({ timeout: 10000 });
  await saveScreenshot(page, 'resources-02-slash-menu');
  await page.keyboard.press('Enter');
  const department = page.getByLabel('department (required)');
  await department.waitFor();
  await department.fill('Eng');
  await page.locator('datalist option[value="Engineering"]').waitFor({ state: 'attached', timeout: 10000 });
  await department.fill('Engineering');
  const name = page.getByLabel('name (required)');
  await name.focus();
  await page.locator('datalist option[value="Alice"]').waitFor({ state: 'attached', timeout: 10000 });
  await name.fill('Alice');
  await saveScreenshot(page, 'resources-03-prompt-form');
  await page.getByRole('button', { name: 'Run prompt' }).click();
  await waitForAnswer(1);
  assert.equal(lastQuestionSent(), 'Please promote Alice to the head of the Engineering team.');
  const earlier = fake.requests[fake.requests.length - 1].body.messages.map((message) => message.role);
  assert.deepEqual(earlier.slice(-3), ['user', 'assistant', 'user'], 'the earlier turn is kept before the prompt');
});

test('resources and prompts: the reloaded conversation shows the attachments and the prompt', async () => {
  await page.reload();
  await page.locator('.message-user .attachment-chip[data-uri="demo://resource/dynamic/text/7"]').waitFor({ timeout: 20000 });
  await page.locator('.message-user[data-prompt="everything:completable-prompt"]').waitFor();
  assert.match(await page.locator('.message-user[data-prompt="everything:completable-prompt"]').textContent(), /Please promote Alice/);
});

test('resources and prompts: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
