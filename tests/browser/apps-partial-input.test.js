// An MCP App shown while the model still writes its call's input (issue 12), in headless Chromium
// against the real binary: a fake OpenAI-compatible model streams the arguments of our palette
// fixture's tool (tests/apps/palette-app-server.mjs, built on the official SDK's `App`) slowly,
// in pieces. The app appears before the call exists, its SDK hears each partial input
// (`ui/notifications/tool-input-partial`, in order, each the final input cut short), then the
// whole input and the result once the call has run — the same frame, adopted by the call.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot } from './support/chromium.js';
import { startSwitchboard } from './support/switchboard.js';
import { appFrame, paletteAppScript, registerApp, setToolPolicy, signedInAppsPage } from './support/apps.js';
import { askInNewConversation } from './support/chat.js';
import { startFakeOpenAi } from './support/fake-openai-server.js';

const INPUT = { title: 'Autumn palette for the annual report', colours: ['amber', 'rust', 'ochre', 'plum'] };

let fake;
let switchboard;
let browser;
let page;
const pageErrors = [];

before(async () => {
  fake = await startFakeOpenAi();
  switchboard = await startSwitchboard({
    env: { SWITCHBOARD_LLM_PROVIDER: 'openai', SWITCHBOARD_LLM_BASE_URL: fake.baseUrl('house'), SWITCHBOARD_LLM_MODEL: 'house-model' },
  });
  const palette = await registerApp(switchboard, 'palette-app', [paletteAppScript]);
  await setToolPolicy(switchboard, palette, 'palette', 'ALWAYS_ALLOW');
  browser = await launchChromium();
  ({ page } = await signedInAppsPage(browser, switchboard, pageErrors));
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
  await fake?.close();
});

test('partial input: the app shows while the model writes the input, hears each version, then the input and the result', async () => {
  fake.enqueueToolCall({ name: 'palette-app__palette', args: INPUT, pieces: 12, pauseMs: 500 });
  const turn = await askInNewConversation(page, switchboard.origin, 'Make me an autumn palette');
  // The palette declares permissions: asked as soon as the app shows, before the call exists.
  const permissions = page.locator('dialog.mcp-app-permissions');
  await permissions.waitFor({ timeout: 30000 });
  await permissions.getByRole('button', { name: 'Allow none' }).click();
  const frame = await appFrame(turn);
  // Before the call exists: the frame has no call yet and the app has partial input only.
  await frame.waitForFunction(() => (document.getElementById('out-partials')?.textContent ?? '').length > 0, null, { timeout: 30000 });
  assert.equal(await frame.locator('#out-input').textContent(), '', 'the whole input came before the model finished');
  assert.equal(await turn.locator('.mcp-app').getAttribute('data-tool-call-id'), '');

  await frame.waitForFunction(() => (document.getElementById('out-result')?.textContent ?? '').length > 0, null, { timeout: 30000 });
  const partials = JSON.parse(await frame.locator('#out-partials').textContent());
  const input = JSON.parse(await frame.locator('#out-input').textContent());
  assert.deepEqual(input, INPUT);
  assert.ok(partials.length >= 2, `several versions: ${JSON.stringify(partials)}`);
  let previous = '';
  for (const partial of partials) {
    if (partial.title !== undefined) assert.ok(INPUT.title.startsWith(partial.title), JSON.stringify(partial));
    // Whole colours so far, the one being written cut short.
    const colours = partial.colours ?? [];
    for (const [at, colour] of colours.entries()) {
      if (at < colours.length - 1) assert.equal(colour, INPUT.colours[at]);
      else assert.ok(INPUT.colours[at].startsWith(colour), JSON.stringify(partial));
    }
    assert.ok(JSON.stringify(partial).length > previous.length, `growing: ${JSON.stringify(partials)}`);
    previous = JSON.stringify(partial);
  }
  // The same frame, now the call's: one app under the turn, named by its call.
  assert.equal(await turn.locator('.mcp-app').count(), 1);
  assert.notEqual(await turn.locator('.mcp-app').getAttribute('data-tool-call-id'), '');
  await turn.locator('.message-usage').waitFor({ state: 'attached', timeout: 30000 });
  await saveScreenshot(page, 'apps-partial-input');
  assert.deepEqual(pageErrors, []);
});
