// Rich tool results in the chat (issue 12), in headless Chromium against the real binary and
// `@modelcontextprotocol/server-everything` (software we did not write), answered by the offline
// planner: `get-tiny-image`'s PNG is shown in its tool card (from the result's data, no request
// leaves the page for it), and `trigger-long-running-operation`'s progress notifications drive a
// live progress bar in its card while it runs, which goes when the call completes; reloading the
// conversation shows the image again from the stored tool message.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchChromium, repositoryRoot, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, serveWebFromDiskWhenAsked, startSwitchboard } from './support/switchboard.js';
import { askInNewConversation } from './support/chat.js';

const everythingServerScript = path.join(repositoryRoot, 'interop', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

let switchboard;
let browser;
let page;
let pageErrors;

before(async () => {
  switchboard = await startSwitchboard();
  const server = await apiCall(switchboard, 'POST', '/api/mcp/servers', { name: 'everything', transport: 'stdio', command: process.execPath, args: [everythingServerScript, 'stdio'] });
  await apiCall(switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
  for (const tool of ['get-tiny-image', 'trigger-long-running-operation']) {
    await apiCall(switchboard, 'PUT', `/api/mcp/servers/${server.id}/tools/${tool}/policy`, { policy: 'ALWAYS_ALLOW' });
  }
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await serveWebFromDiskWhenAsked(context);
  await context.addInitScript((token) => sessionStorage.setItem('switchboard.token', token), switchboard.token);
  page = await context.newPage();
  pageErrors = watchPageErrors(page);
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

test('rich results: an image result is shown in its tool card, live and from history', async () => {
  const requests = [];
  page.on('request', (request) => requests.push(request.url()));
  const turn = await askInNewConversation(page, switchboard.origin, 'Show me the tiny image');
  const image = turn.locator('.tool-call-card img.tool-image');
  await image.waitFor({ timeout: 30000 });
  assert.match(await image.getAttribute('src'), /^data:image\/png;base64,iVBOR/);
  const size = await image.evaluate((element) => element.decode().then(() => ({ width: element.naturalWidth, height: element.naturalHeight })));
  assert.ok(size.width > 0 && size.height > 0, `the PNG decodes (${size.width}×${size.height})`);
  assert.deepEqual(requests.filter((url) => !url.startsWith(switchboard.origin) && !url.startsWith('data:')), [], 'the image cost no request');
  await saveScreenshot(page, 'rich-01-image');

  await page.reload();
  const stored = page.locator('.message-assistant .tool-call-card img.tool-image').first();
  await stored.waitFor({ timeout: 20000 });
  assert.match(await stored.getAttribute('src'), /^data:image\/png;base64,iVBOR/);
});

test('rich results: a long-running tool shows a live progress bar until it completes', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'Start the long running operation');
  const bar = turn.locator('.tool-call-card progress.tool-progress');
  await bar.waitFor({ timeout: 30000 });
  const first = Number(await bar.getAttribute('value'));
  assert.equal(await bar.getAttribute('max'), '5');
  await page.waitForFunction((before) => Number(document.querySelector('progress.tool-progress')?.getAttribute('value')) > before, first, { timeout: 20000 });
  await saveScreenshot(page, 'rich-02-progress');
  await turn.locator('.tool-call[data-status=completed]').waitFor({ timeout: 30000 });
  assert.equal(await bar.count(), 0, 'the bar goes when the call completes');
});

test('rich results: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
