// What an MCP App may ask of its host (issue 12), in headless Chromium against the real binary:
// our palette fixture (tests/apps/palette-app-server.mjs, built on the official SDK's `App`, so
// the method names are the SDK's) asks for the permissions its resource declares (the person
// allows one: only that one reaches the frame's `allow`), opens a link (the person is asked; only
// http(s); no opener), changes its display mode (fullscreen granted and told back through
// `host-context-changed`, pip refused), updates the model's context (stored through the API),
// reads a resource of its own server through the approval gate (and not another server's), and
// sends a message the person accepts, which becomes their next message without touching what
// they were typing. The official example `@modelcontextprotocol/server-basic-vanillajs` does the
// same for its "Open Link" and "Send Message" buttons.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { appFrame, basicAppScript, paletteAppScript, registerApp as registerAppOf, setToolPolicy, signedInAppsPage } from './support/apps.js';
import { askInNewConversation as askInNewConversation_ } from './support/chat.js';


let switchboard;
let browser;
let context;
let page;
const pageErrors = [];

const registerApp = (name, args) => registerAppOf(switchboard, name, args);
const allow = (serverId, tool) => setToolPolicy(switchboard, serverId, tool, 'ALWAYS_ALLOW');

before(async () => {
  switchboard = await startSwitchboard();
  const basic = await registerApp('basic-app', [basicAppScript, '--stdio']);
  const palette = await registerApp('palette-app', [paletteAppScript]);
  await allow(basic, 'get-time');
  await allow(palette, 'palette');
  // An app's resources/read is reviewed as the host's pseudo-tool `resources/read`.
  await allow(palette, 'resources/read');
  browser = await launchChromium();
  // The links apps open, answered here (no network in tests): the tab shows what it was sent to.
  const answerLinks = (opened) => opened.route(/^https:\/\/(example\.com|modelcontextprotocol\.io)\//, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>linked</title>' }));
  ({ context, page } = await signedInAppsPage(browser, switchboard, pageErrors, answerLinks));
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

/** Clicks `#name` in the app and resolves to what it wrote into `#out-name` once settled. */
async function press(frame, name, { whileWaiting } = {}) {
  await frame.click(`#${name}`);
  if (whileWaiting) await whileWaiting();
  await frame.waitForFunction((id) => {
    const text = document.getElementById(`out-${id}`)?.textContent ?? '';
    return text !== '' && text !== 'waiting';
  }, name, { timeout: 20000 });
  return frame.locator(`#out-${name}`).textContent();
}

test('apps: the palette app gets what the person allows, and asks the person before links and messages', async () => {
  const turn = await askInNewConversation_(page, switchboard.origin, 'Show the colour palette');

  // Permissions: the dialog lists what the resource declares; the person allows one.
  const permissions = page.locator('dialog.mcp-app-permissions');
  await permissions.waitFor({ timeout: 30000 });
  assert.match(await permissions.textContent(), /Camera[\s\S]*Write to the clipboard/);
  await permissions.getByLabel('Camera').uncheck();
  await saveScreenshot(page, 'apps-requests-01-permissions');
  await permissions.getByRole('button', { name: 'Allow the checked ones' }).click();
  const frame = await appFrame(turn);
  assert.equal(await turn.locator('.mcp-app iframe').getAttribute('allow'), 'clipboard-write');
  await frame.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
  const init = JSON.parse(await frame.locator('#out-init').textContent());
  assert.equal(init.host, 'Switchboard');
  assert.equal(init.display_mode, 'inline');
  assert.deepEqual(init.available, ['inline', 'fullscreen']);
  assert.deepEqual(init.capabilities.sandbox.permissions, { clipboardWrite: {} });
  assert.ok(init.capabilities.openLinks && init.capabilities.message && init.capabilities.updateModelContext && init.capabilities.serverResources);
  assert.equal(init.allows.camera, false, 'declared but not allowed');
  assert.equal(init.allows.microphone, false, 'not declared');
  assert.equal(init.allows['clipboard-write'], true, 'declared and allowed');

  // ui/open-link: asked; refused → isError; accepted → a new tab without opener.
  let shown = await press(frame, 'open-link', {
    whileWaiting: async () => {
      const dialog = page.locator('dialog.mcp-app-open-link');
      await dialog.waitFor();
      assert.match(await dialog.textContent(), /https:\/\/example\.com\/teal/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    },
  });
  assert.equal(JSON.parse(shown).isError, true);
  const popupPromise = context.waitForEvent('page', { timeout: 10000 });
  shown = await press(frame, 'open-link', {
    whileWaiting: () => page.locator('dialog.mcp-app-open-link').getByRole('button', { name: 'Open link' }).click(),
  });
  assert.notEqual(JSON.parse(shown).isError, true, shown);
  const popup = await popupPromise;
  await popup.waitForLoadState();
  assert.equal(popup.url(), 'https://example.com/teal');
  assert.equal(await popup.evaluate(() => window.opener), null, 'no opener');
  await popup.close();
  shown = await press(frame, 'open-bad-link');
  assert.equal(JSON.parse(shown).isError, true, 'javascript: is never offered to the person');
  assert.equal(await page.locator('dialog.mcp-app-open-link').count(), 0);

  // Display modes: fullscreen granted and told back; pip is not offered; the host's own button
  // brings it back inline.
  assert.equal(await press(frame, 'fullscreen'), 'fullscreen');
  await frame.waitForFunction(() => document.getElementById('out-context-mode').textContent === 'fullscreen');
  const app = turn.locator('.mcp-app');
  assert.equal(await app.getAttribute('data-display-mode'), 'fullscreen');
  const box = await turn.locator('.mcp-app iframe').boundingBox();
  assert.ok(box.height > 700 && box.width > 1200, JSON.stringify(box));
  await saveScreenshot(page, 'apps-requests-02-fullscreen');
  assert.equal(await press(frame, 'pip'), 'fullscreen');
  await page.getByRole('button', { name: 'Exit full screen' }).click();
  await frame.waitForFunction(() => document.getElementById('out-context-mode').textContent === 'inline');
  assert.equal(await app.getAttribute('data-display-mode'), 'inline');

  // ui/update-model-context: stored through the API.
  const stored = page.waitForResponse((response) => response.url().endsWith('/app/model-context') && response.request().method() === 'PUT');
  assert.equal(await press(frame, 'update-context'), '{}');
  const storedBody = await (await stored).json();
  assert.equal(storedBody.content[0].text, 'The person picked teal.');
  assert.deepEqual(storedBody.structured_content, { colour: 'teal' });

  // resources/read: its own server's resource, through the gate; another server's is not reached.
  assert.equal(await press(frame, 'read-own'), 'teal, coral');
  assert.match(await press(frame, 'read-other'), /^error: .*no such resource on the palette server/);
  const audit = await apiCall(switchboard, 'GET', '/api/audit?action=tool_call.');
  const reads = audit.entries.filter((entry) => entry.details?.origin === 'app');
  assert.ok(reads.some((entry) => String(entry.target).endsWith('/resources/read')), JSON.stringify(reads).slice(0, 600));

  // ui/message: shown to the person, sent as their next message; their draft stays.
  await page.fill('#chat-input', 'my draft');
  const turns = await page.locator('.message-assistant').count();
  shown = await press(frame, 'send-message', {
    whileWaiting: async () => {
      const dialog = page.locator('dialog.mcp-app-message');
      await dialog.waitFor();
      assert.match(await dialog.textContent(), /Tell me about the colour teal/);
      await saveScreenshot(page, 'apps-requests-03-message');
      await dialog.getByRole('button', { name: 'Send as my message' }).click();
    },
  });
  assert.notEqual(JSON.parse(shown).isError, true, shown);
  await page.locator('.message-user').filter({ hasText: 'Tell me about the colour teal' }).waitFor({ timeout: 10000 });
  await page.locator('.message-assistant').nth(turns).waitFor({ timeout: 30000 });
  assert.equal(await page.inputValue('#chat-input'), 'my draft');
});

test('apps: the official basic example asks the person before its link and its message', async () => {
  const turn = await askInNewConversation_(page, switchboard.origin, 'What is the server time?');
  const frame = await appFrame(turn);
  await frame.waitForFunction(() => /\d{4}-\d\d-\d\dT/.test(document.getElementById('server-time')?.textContent ?? ''), null, { timeout: 30000 });
  await frame.click('#open-link-btn');
  const linkDialog = page.locator('dialog.mcp-app-open-link');
  await linkDialog.waitFor();
  assert.match(await linkDialog.textContent(), /https:\/\/modelcontextprotocol\.io\//);
  const [popup] = await Promise.all([
    context.waitForEvent('page', { timeout: 10000 }),
    linkDialog.getByRole('button', { name: 'Open link' }).click(),
  ]);
  await popup.waitForLoadState();
  assert.equal(popup.url(), 'https://modelcontextprotocol.io/');
  await popup.close();

  await frame.fill('#message-text', 'What else can you do?');
  await frame.click('#send-message-btn');
  const messageDialog = page.locator('dialog.mcp-app-message');
  await messageDialog.waitFor();
  await messageDialog.getByRole('button', { name: 'Send as my message' }).click();
  await page.locator('.message-user').filter({ hasText: 'What else can you do?' }).waitFor({ timeout: 10000 });
});

test('apps: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
