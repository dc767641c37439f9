// The first hour, counted: from an empty instance (only the owner token it was started with) to
// a first answer that uses a server imported in the web UI, by clicks. Every click goes through
// `click()`, which counts it; typing (the token, the pasted file, the question) is not a click.
// The figure is printed (`first answer after N clicks`) and bounded, so a change that adds a
// step to this path fails here and is seen. The model is the built-in offline planner; the
// server is the reference `server-everything`, pasted as a Claude Desktop file.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { launchChromium, repositoryRoot, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { serveWebFromDiskWhenAsked, startSwitchboard } from './support/switchboard.js';

const everythingServerScript = path.join(repositoryRoot, 'interop', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/** The most clicks the path may take; README states the figure. */
const MOST_CLICKS = 9;

let switchboard;
let browser;

before(async () => {
  switchboard = await startSwitchboard();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

/** Waits until the server named `name` has its tools listed (the background sync is done). */
async function toolsSynced(instance, name) {
  for (let attempt = 0; attempt < 120; attempt += 1) {
    const response = await fetch(`${instance.origin}/api/mcp/servers`, { headers: { Authorization: `Bearer ${instance.token}` } });
    const server = (await response.json()).servers.find((entry) => entry.name === name);
    if ((server?.tool_count ?? server?.tools?.length ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${name} never listed its tools`);
}

test('first hour: an empty instance answers with an imported server in a counted number of clicks', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await serveWebFromDiskWhenAsked(context);
  const page = await context.newPage();
  const errors = watchPageErrors(page);
  const steps = [];
  const click = async (locator, step) => {
    steps.push(step);
    await locator.click();
  };

  await page.goto(`${switchboard.origin}/`);
  await page.locator('#token-input').fill(switchboard.token);
  await click(page.locator('form button[type=submit]'), 'sign in');
  await click(page.locator('.app-nav').getByRole('link', { name: 'Servers' }), 'open Servers');
  await click(page.getByRole('button', { name: 'Import…' }), 'open Import');
  const dialog = page.locator('dialog[open]');
  const file = { mcpServers: { everything: { command: process.execPath, args: [everythingServerScript, 'stdio'] } } };
  await dialog.getByLabel('Configuration file').fill(JSON.stringify(file, null, 2));
  await click(dialog.getByRole('button', { name: 'Preview' }), 'preview');
  await click(dialog.getByRole('button', { name: 'Import 1 server' }), 'import');
  await click(dialog.getByRole('button', { name: 'Done' }), 'close the dialog');
  // No click: the import syncs the server in the background; a person reading the page waits
  // about as long.
  await toolsSynced(switchboard, 'everything');
  await click(page.locator('.app-nav').getByRole('link', { name: 'Chat' }), 'open Chat');
  await page.locator('#chat-input').fill('Echo the words first hour');
  await click(page.getByRole('button', { name: 'Send' }), 'send');
  const turn = page.locator('.message-assistant').first();
  await turn.waitFor();
  const approval = turn.locator('.approval-card');
  const call = turn.locator('.tool-call').filter({ hasText: 'echo' }).first();
  await Promise.race([approval.waitFor({ timeout: 60000 }), call.waitFor({ timeout: 60000 })]);
  if (await approval.isVisible()) await click(approval.getByRole('button', { name: 'Approve once' }), 'approve the call');
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 60000 });
  assert.match(await call.textContent(), /echo/);
  assert.match(await turn.textContent(), /first hour/);
  await saveScreenshot(page, '50-first-hour-answer');
  console.log(`first answer after ${steps.length} clicks: ${steps.join(' → ')}`);
  assert.ok(steps.length <= MOST_CLICKS, `${steps.length} clicks: ${steps.join(' → ')}`);
  assert.deepEqual(errors, []);
  await context.close();
});
