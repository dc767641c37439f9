// An MCP App's own requests wait for the person (issue 12), in headless Chromium against the real
// binary: when the policy of the tool an app calls is ASK_USER, the chat shows the same approval
// card a turn's call gets, under the app; approving lets the app's request go on (the app shows
// the result), denying makes it fail with the refusal, and the card leaves once decided, here or
// elsewhere (the approvals API, as another tab would). The official example
// `@modelcontextprotocol/server-basic-vanillajs` calls `get-time`; our palette fixture
// (tests/apps/palette-app-server.mjs, the official SDK's `App`) reads `palette://colours`,
// reviewed as the host's pseudo-tool `resources/read`.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { appFrame, basicAppScript, paletteAppScript, registerApp as registerAppOf, setToolPolicy, signedInAppsPage } from './support/apps.js';
import { askInNewConversation } from './support/chat.js';

const TIME = /\d{4}-\d\d-\d\dT/;

let switchboard;
let browser;
let page;
let basic;
let palette;
const pageErrors = [];

const registerApp = (name, args) => registerAppOf(switchboard, name, args);
const setPolicy = (serverId, tool, policy) => setToolPolicy(switchboard, serverId, tool, policy);

before(async () => {
  switchboard = await startSwitchboard();
  basic = await registerApp('basic-app', [basicAppScript, '--stdio']);
  palette = await registerApp('palette-app', [paletteAppScript]);
  // The model's own calls are allowed; what the apps ask afterwards waits for the person.
  await setPolicy(basic, 'get-time', 'ALWAYS_ALLOW');
  await setPolicy(palette, 'palette', 'ALWAYS_ALLOW');
  browser = await launchChromium();
  ({ page } = await signedInAppsPage(browser, switchboard, pageErrors));
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

/** The approval card shown under the turn's app, once it appears. */
async function appCard(turn) {
  const card = turn.locator('.mcp-app .mcp-app-approvals .approval-card');
  await card.waitFor({ timeout: 15000 });
  return card;
}

async function cardGone(turn) {
  await turn.locator('.mcp-app .approval-card').waitFor({ state: 'detached', timeout: 10000 });
}

test('app approvals: the basic example\'s get-time waits for the person, who approves it once and then denies it', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'What is the server time?');
  const frame = await appFrame(turn);
  await frame.waitForFunction((pattern) => new RegExp(pattern).test(document.getElementById('server-time')?.textContent ?? ''), TIME.source, { timeout: 30000 });
  const shownTime = (await frame.locator('#server-time').textContent()).trim();
  await setPolicy(basic, 'get-time', 'ASK_USER');

  // Approved: the app's request goes on and the app shows the new time.
  await frame.click('#get-time-btn');
  let card = await appCard(turn);
  assert.match(await card.locator('h3').textContent(), /Allow basic-app · get-time\?/);
  assert.equal(await card.getByRole('button', { name: 'Always allow' }).count(), 1, 'the same choices as a turn\'s card');
  const pending = await apiCall(switchboard, 'GET', '/chat/approvals');
  const cardId = await card.getAttribute('data-approval-id');
  const asked = pending.approvals.find((approval) => approval.approval_id === cardId);
  assert.ok(asked, JSON.stringify(pending));
  assert.equal(asked.tool, 'get-time');
  assert.equal(asked.app_of, await turn.locator('.mcp-app').getAttribute('data-tool-call-id'), 'the card is under the app that asked');
  assert.equal(await turn.locator('.action-card').count(), 1, 'only the app\'s card, no turn card');
  const inView = await card.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  });
  assert.ok(inView, 'the card is brought into view');
  await saveScreenshot(page, 'apps-approvals-01-card');
  await card.getByRole('button', { name: 'Approve once' }).click();
  await cardGone(turn);
  await frame.waitForFunction(({ pattern, before }) => {
    const text = document.getElementById('server-time')?.textContent ?? '';
    return new RegExp(pattern).test(text) && text.trim() !== before;
  }, { pattern: TIME.source, before: shownTime }, { timeout: 20000 });

  // Denied: the app's request fails (the example shows [ERROR]).
  await frame.click('#get-time-btn');
  card = await appCard(turn);
  await card.getByRole('button', { name: 'Deny' }).click();
  await cardGone(turn);
  await frame.waitForFunction(() => document.getElementById('server-time')?.textContent === '[ERROR]', null, { timeout: 20000 });
  const settled = await apiCall(switchboard, 'GET', '/chat/approvals?state=all');
  const statuses = settled.approvals.filter((approval) => approval.tool === 'get-time').map((approval) => approval.status);
  assert.deepEqual(statuses, ['approved', 'denied']);
});

test('app approvals: the palette app\'s resources/read shows its URI; decided elsewhere, the card leaves', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'Show the colour palette');
  // The palette declares permissions: the person allows none.
  const permissions = page.locator('dialog.mcp-app-permissions');
  await permissions.waitFor({ timeout: 30000 });
  await permissions.getByRole('button', { name: 'Allow none' }).click();
  const frame = await appFrame(turn);
  await frame.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30000 });

  // Approved through the API (another tab): the card goes, the app gets the resource.
  await frame.click('#read-own');
  let card = await appCard(turn);
  assert.match(await card.locator('h3').textContent(), /Allow palette-app · resources\/read\?/);
  assert.match(await card.textContent(), /palette:\/\/colours/);
  const approvalId = await card.getAttribute('data-approval-id');
  const decided = await apiCall(switchboard, 'POST', `/chat/approvals/${approvalId}`, { decision: 'approve', remember: 'once' });
  assert.equal(decided.decision, 'approved');
  await cardGone(turn);
  await frame.waitForFunction(() => document.getElementById('out-read-own').textContent === 'teal, coral', null, { timeout: 20000 });

  // Denied in the card: the app's read fails with the refusal.
  await frame.click('#read-own');
  card = await appCard(turn);
  await card.getByRole('button', { name: 'Deny' }).click();
  await cardGone(turn);
  await frame.waitForFunction(() => /^error: /.test(document.getElementById('out-read-own').textContent), null, { timeout: 20000 });
  assert.match(await frame.locator('#out-read-own').textContent(), /denied/);
});

test('app approvals: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
