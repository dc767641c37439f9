// Browser test of the model side of the chat: an OpenAI-compatible fake (served by this test,
// speaking Chat Completions SSE with usage) stands for two providers — `default` from the
// configuration and `second` added through the API. A bud is made in the Assistants editor, the
// chat header's model picker chooses `second`'s model for a new conversation, the answer comes
// from that provider and model, and the line under it names them with the tokens the provider
// reported; "assistant's model" goes back to the bud's, and a reload shows both lines from the
// stored messages. Against the real `switchboard serve` binary in headless Chromium.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { saveScreenshot } from './support/chromium.js';
import { apiCall, startBrowserSession } from './support/switchboard.js';
import { createBudInEditor } from './support/bud-editor.js';
import { askAndWait } from './support/chat.js';
import { FAKE_USAGE, startFakeOpenAi } from './support/fake-openai-server.js';

let fake;
let switchboard;
let page;
let pageErrors;
let session;

before(async () => {
  fake = await startFakeOpenAi({ models: { second: ['second-small', 'second-large'] } });
  session = await startBrowserSession({
    env: {
      SWITCHBOARD_LLM_PROVIDER: 'openai',
      SWITCHBOARD_LLM_BASE_URL: fake.baseUrl('house'),
      SWITCHBOARD_LLM_MODEL: 'house-model',
    },
  });
  ({ switchboard, page, pageErrors } = session);
  await apiCall(switchboard, 'POST', '/api/llm/providers', {
    name: 'second', kind: 'openai', base_url: fake.baseUrl('second'), default_model: 'second-small',
  });
});

after(async () => {
  await session?.close();
  await fake?.close();
});

const usageText = `${FAKE_USAGE.prompt_tokens.toLocaleString('en')} tokens in · ${FAKE_USAGE.completion_tokens} out · ${FAKE_USAGE.cached_tokens.toLocaleString('en')} cache read`;

test('model picker: a conversation answers with the model picked, the usage line names it, the bud’s model comes back', async () => {
  await page.goto(`${switchboard.origin}/#/chat`);
  const card = await createBudInEditor(page, { name: 'Picker bud', systemPrompt: 'Answer briefly.' });
  const [bud] = (await apiCall(switchboard, 'GET', '/api/buds')).buds;
  assert.equal(bud.name, 'Picker bud');
  assert.equal(bud.system_prompt, 'Answer briefly.');

  await card.getByRole('link', { name: 'Chat with it' }).click();
  await page.waitForFunction((id) => document.getElementById('bud-select')?.value === id, bud.id);
  const picker = page.getByLabel('Model', { exact: true });
  // The picker lists both providers' models (the second's from its own GET /models) and says
  // which one answers now: the bud's, which is the default provider's model.
  await picker.locator('option[value="second:second-large"]').waitFor({ state: 'attached' });
  assert.equal(await picker.inputValue(), '');
  assert.equal((await picker.locator('option:checked').textContent()).trim(), 'Assistant’s model (default · house-model)');
  await picker.selectOption('second:second-large');

  const first = await askAndWait(page, 'Who answers?');
  assert.equal((await first.locator('.answer').textContent()).trim(), 'Answered by second with second-large.');
  const firstUsage = first.locator('.message-usage');
  assert.equal((await firstUsage.textContent()).trim(), `second · second-large · ${usageText}`);
  await saveScreenshot(page, '26-model-picker-usage');
  const asked = fake.requests.at(-1);
  assert.equal(asked.prefix, 'second');
  assert.equal(asked.body.model, 'second-large');

  const conversationId = decodeURIComponent(new URL(page.url()).hash.replace(/^#\/chat\//, ''));
  const detail = await apiCall(switchboard, 'GET', `/chat/conversations/${encodeURIComponent(conversationId)}`);
  assert.equal(detail.conversation.bud_id, bud.id);
  assert.equal(detail.conversation.provider, 'second');
  assert.equal(detail.conversation.model, 'second-large');
  const answer = detail.messages.findLast((message) => message.role === 'assistant');
  assert.equal(answer.provider_name, 'second');
  assert.equal(answer.model, 'second-large');
  assert.deepEqual(answer.usage, { input_tokens: FAKE_USAGE.prompt_tokens, output_tokens: FAKE_USAGE.completion_tokens, cache_read_tokens: FAKE_USAGE.cached_tokens, cache_write_tokens: 0 });

  // Back to the bud's model: the override is cleared and the next answer is the default's.
  assert.equal(await picker.inputValue(), 'second:second-large');
  await picker.selectOption('');
  await page.waitForFunction(async (id) => {
    const response = await fetch(`/chat/conversations/${encodeURIComponent(id)}`, { headers: { Authorization: `Bearer ${sessionStorage.getItem('switchboard.token')}` } });
    const body = await response.json();
    return body.conversation.provider === null && body.conversation.model === null;
  }, conversationId);
  const second = await askAndWait(page, 'And now?');
  assert.equal((await second.locator('.answer').textContent()).trim(), 'Answered by house with house-model.');
  assert.equal((await second.locator('.message-usage').textContent()).trim(), `default · house-model · ${usageText}`);
  assert.equal(fake.requests.at(-1).prefix, 'house');

  // After a reload, both lines come from the stored messages.
  await page.reload();
  await page.locator('.message-assistant').nth(1).waitFor();
  const lines = await page.locator('.message-usage').allTextContents();
  assert.deepEqual(lines.map((line) => line.trim()), [`second · second-large · ${usageText}`, `default · house-model · ${usageText}`]);
  assert.equal(await picker.inputValue(), '');
});

test('no script errors on the chat page', () => {
  assert.deepEqual(pageErrors.filter((error) => !/Failed to load resource/.test(error)), []);
});
