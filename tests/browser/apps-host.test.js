// The rest of the host side of MCP Apps (issue 12), in headless Chromium against the real binary,
// driven through our palette fixture (tests/apps/palette-app-server.mjs, the official SDK's `App`;
// a request the SDK does not send itself goes to the host as raw JSON-RPC): the host's theme and
// styles in `ui/initialize` (the spec's CSS variables, applied by the SDK's helper) and again when
// the system switches to dark; `ui/download-file` of an embedded resource and of a resource link
// read from the app's own server, each shown to the person first (refusing is `isError`); the
// app's own server's resources, templates and prompts listed; `sampling/createMessage` refused
// with a JSON-RPC error; a log message reaching the console; and the app's request to be closed
// granted, with `ui/resource-teardown` before its frame goes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { launchChromium, saveScreenshot } from './support/chromium.js';
import { startSwitchboard } from './support/switchboard.js';
import { appFrame, paletteAppScript, registerApp, setToolPolicy, signedInAppsPage } from './support/apps.js';
import { askInNewConversation } from './support/chat.js';

let switchboard;
let browser;
let page;
let frame;
let turn;
const pageErrors = [];
const debugLines = [];

before(async () => {
  switchboard = await startSwitchboard();
  const palette = await registerApp(switchboard, 'palette-app', [paletteAppScript]);
  await setToolPolicy(switchboard, palette, 'palette', 'ALWAYS_ALLOW');
  await setToolPolicy(switchboard, palette, 'resources/read', 'ALWAYS_ALLOW');
  browser = await launchChromium();
  ({ page } = await signedInAppsPage(browser, switchboard, pageErrors));
  page.on('console', (message) => { if (message.type() === 'debug') debugLines.push(message.text()); });
  await page.emulateMedia({ colorScheme: 'light' });
  turn = await askInNewConversation(page, switchboard.origin, 'Show the colour palette');
  const permissions = page.locator('dialog.mcp-app-permissions');
  await permissions.waitFor({ timeout: 30000 });
  await permissions.getByRole('button', { name: 'Allow none' }).click();
  frame = await appFrame(turn);
  await frame.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

/** Clicks `#name` in the app and resolves to what it wrote into `#out-name` once settled. */
async function press(name, { whileWaiting } = {}) {
  await frame.click(`#${name}`);
  if (whileWaiting) await whileWaiting();
  await frame.waitForFunction((id) => {
    const text = document.getElementById(`out-${id}`)?.textContent ?? '';
    return text !== '' && text !== 'waiting';
  }, name, { timeout: 20000 });
  return frame.locator(`#out-${name}`).textContent();
}

const styles = async () => JSON.parse(await frame.locator('#out-styles').textContent());

test('apps host: theme and host styles in ui/initialize, told again when the system turns dark', async () => {
  const init = JSON.parse(await frame.locator('#out-init').textContent());
  assert.equal(init.theme, 'light');
  assert.deepEqual(init.capabilities.downloadFile, {});
  assert.equal(init.capabilities.sampling, undefined, 'sampling is not offered');
  const light = await styles();
  assert.deepEqual({ theme: light.theme, background: light.background, text: light.text }, { theme: 'light', background: '#ffffff', text: '#1b1f24' });
  assert.ok(light.count >= 20, `${light.count} variables sent`);

  await page.emulateMedia({ colorScheme: 'dark' });
  await frame.waitForFunction(() => JSON.parse(document.getElementById('out-styles').textContent).theme === 'dark', null, { timeout: 10000 });
  const dark = await styles();
  assert.deepEqual({ background: dark.background, text: dark.text }, { background: '#181c21', text: '#e6e9ed' }, 'the app resolves the dark theme\'s colours');
  await saveScreenshot(page, 'apps-host-01-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await frame.waitForFunction(() => JSON.parse(document.getElementById('out-styles').textContent).theme === 'light', null, { timeout: 10000 });
});

test('apps host: ui/download-file saves an embedded resource and a linked one after the person agrees; refusing is isError', async () => {
  const dialog = page.locator('dialog.mcp-app-download');
  const downloaded = page.waitForEvent('download', { timeout: 20000 });
  assert.equal(await press('download-embedded', {
    whileWaiting: async () => {
      await dialog.waitFor({ timeout: 10000 });
      assert.match(await dialog.textContent(), /palette\.csv · text\/csv · 18 bytes/);
      await saveScreenshot(page, 'apps-host-02-download');
      await dialog.getByRole('button', { name: 'Download' }).click();
    },
  }), '{}');
  const csv = await downloaded;
  assert.equal(csv.suggestedFilename(), 'palette.csv');
  assert.equal(await readFile(await csv.path(), 'utf8'), 'colour\nteal\ncoral\n');

  // A link: read from the app's own server (the gate allows it), shown, refused.
  assert.equal(await press('download-link', {
    whileWaiting: async () => {
      await dialog.waitFor({ timeout: 10000 });
      assert.match(await dialog.textContent(), /colours\.txt · text\/plain · 11 bytes/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    },
  }), '{"isError":true}');

  // Accepted this time: the file holds the resource's text.
  const linked = page.waitForEvent('download', { timeout: 20000 });
  assert.equal(await press('download-link', {
    whileWaiting: async () => {
      await dialog.waitFor({ timeout: 10000 });
      await dialog.getByRole('button', { name: 'Download' }).click();
    },
  }), '{}');
  const text = await linked;
  assert.equal(text.suggestedFilename(), 'colours.txt');
  assert.equal(await readFile(await text.path(), 'utf8'), 'teal, coral');
});

test('apps host: the app lists its own server\'s resources, templates and prompts', async () => {
  assert.equal(await press('list-resources'), 'ui://palette/app.html palette://colours');
  assert.deepEqual(JSON.parse(await press('list-templates')), { resourceTemplates: [{ uriTemplate: 'palette://colours/{name}', name: 'colour', mimeType: 'text/plain' }] });
  assert.deepEqual(JSON.parse(await press('list-prompts')), { prompts: [{ name: 'describe-colour', description: 'Describes a colour.', arguments: [{ name: 'colour', required: true }] }] });
});

test('apps host: sampling is refused with a JSON-RPC error; a log message reaches the console', async () => {
  const refused = JSON.parse(await press('sample'));
  assert.equal(refused.code, -32601);
  assert.match(refused.message, /sampling\/createMessage is refused/);

  const logged = page.waitForEvent('console', { predicate: (message) => message.text() === '[MCP App palette-app · palette] warning: palette says hello', timeout: 10000 });
  assert.equal(await press('log'), 'sent');
  assert.equal((await logged).type(), 'debug');
});

test('apps host: an app that asks to be closed is torn down (ui/resource-teardown first) and leaves a note', async () => {
  await frame.click('#close');
  await turn.locator('.mcp-app-closed').waitFor({ timeout: 10000 });
  assert.equal(await turn.locator('.mcp-app iframe').count(), 0);
  assert.equal(await turn.locator('.mcp-app').getAttribute('data-state'), 'closed');
  assert.ok(debugLines.includes('[MCP App palette-app · palette] info: palette torn down'), `the app's teardown handler ran before removal: ${JSON.stringify(debugLines)}`);
});

test('apps host: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
