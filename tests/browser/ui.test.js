// End-to-end browser tests of the web UI against the real `switchboard serve` binary (SQLite in a
// temp dir, the built-in knowledge-graph server, the offline planner), driven through headless
// Debian Chromium. Each step saves a screenshot to artifacts/screenshots/ (README: "Screenshots").
// The steps share one browser page and one server, in order, like a user's session.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launchChromium, repositoryRoot, saveScreenshot, screenshotDirectory, watchPageErrors } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';

const everythingServerScript = path.join(repositoryRoot, 'interop', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const XSS_PAYLOAD = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';

let switchboard;
let browser;
let context;
let page;
let pageErrors;

before(async () => {
  switchboard = await startSwitchboard();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  pageErrors = watchPageErrors(page);
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

async function signIn(targetPage, token) {
  await targetPage.fill('#token-input', token);
  await targetPage.click('form button[type=submit]');
}

async function askAndWaitForAnswer(question) {
  const answersBefore = await page.locator('.message-assistant').count();
  await page.fill('#chat-input', question);
  await page.keyboard.press('Enter');
  const turn = page.locator('.message-assistant').nth(answersBefore);
  await turn.waitFor();
  return turn;
}

async function waitForTurnToFinish(turn) {
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 30000 });
}

test('sign in: a wrong token is refused in plain words, the right one opens the chat', async () => {
  await page.goto(`${switchboard.origin}/`);
  await page.locator('#token-input').waitFor();
  await saveScreenshot(page, '01-sign-in');
  await signIn(page, 'not-a-real-token');
  await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
  await signIn(page, switchboard.token);
  await page.locator('.example-question').first().waitFor();
  assert.equal(await page.locator('nav .nav-link[aria-current=page]').textContent(), 'Chat');
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'the token is never put in localStorage');
  await saveScreenshot(page, '02-chat-empty');
});

test('chat: an example question shows the tool activity, then the answer', async () => {
  await page.locator('.example-question', { hasText: "What's the schema version?" }).click();
  const turn = page.locator('.message-assistant').last();
  const call = turn.locator('.tool-call').filter({ hasText: 'schema_version' }).first();
  await call.waitFor();
  await waitForTurnToFinish(turn);
  assert.equal(await call.getAttribute('data-status'), 'completed');
  assert.match(await call.locator('.badge').first().textContent(), /^✓ /);
  const answer = (await turn.locator('.answer').textContent()).trim();
  assert.ok(answer.length > 10, `expected an answer, got "${answer}"`);
  await call.locator('summary').click();
  await call.locator('.json-viewer').nth(1).waitFor();
  assert.match(page.url(), /#\/chat\/.+/, 'the new conversation is in the address');
  await saveScreenshot(page, '03-chat-answer');
});

test('xss: markup planted in the knowledge graph stays text in the tool result and the answer', async () => {
  const { schema } = await apiCall(switchboard, 'GET', '/api/kg/schema');
  const documentType = schema.object_types.find((type) => type.name === 'Document');
  assert.ok(documentType, 'the sample dataset has a Document type');
  await apiCall(switchboard, 'POST', '/api/kg/schema/edits', {
    edit: { op: 'upsert_object_type', object_type: { ...documentType, description: `Planted ${XSS_PAYLOAD} **markup**` } },
    message: 'browser test: XSS payload in a description',
  });
  const turn = await askAndWaitForAnswer('Tell me about the Document type');
  await waitForTurnToFinish(turn);
  const call = turn.locator('.tool-call').first();
  await call.locator('summary').click();
  for (const button of await call.getByRole('button', { name: 'Expand all' }).all()) await button.click();
  const shown = await turn.textContent();
  assert.ok(shown.includes('<img src=x onerror='), 'the payload is visible as text');
  assert.equal(await turn.locator('img, script, iframe, [onerror]').count(), 0, 'no element came from the payload');
  assert.equal(await page.evaluate(() => window.__xss ?? null), null, 'no payload script ran');
  await saveScreenshot(page, '03b-chat-xss-inert');
  await apiCall(switchboard, 'POST', '/api/kg/schema/edits', { edit: { op: 'upsert_object_type', object_type: documentType }, message: 'browser test: restore' });
});

test('chat page weight: everything the chat page loads, as transferred', async () => {
  const measuringContext = await browser.newContext();
  await measuringContext.addInitScript((token) => sessionStorage.setItem('switchboard.token', token), switchboard.token);
  const measuringPage = await measuringContext.newPage();
  const requests = [];
  measuringPage.on('requestfinished', (request) => requests.push(request));
  await measuringPage.goto(`${switchboard.origin}/#/chat`, { waitUntil: 'networkidle' });
  await measuringPage.locator('.example-question').first().waitFor();
  let transferred = 0;
  let decoded = 0;
  const files = [];
  for (const request of requests) {
    const sizes = await request.sizes();
    const response = await request.response();
    const body = sizes.responseBodySize;
    transferred += body + sizes.responseHeadersSize;
    const length = (await response?.body().catch(() => null))?.length ?? 0;
    decoded += length;
    files.push({ url: new URL(request.url()).pathname, transferredBytes: body, bytes: length });
  }
  await measuringContext.close();
  const report = { page: '/#/chat', requests: files.length, transferredKB: +(transferred / 1024).toFixed(1), uncompressedKB: +(decoded / 1024).toFixed(1), files };
  mkdirSync(screenshotDirectory, { recursive: true });
  writeFileSync(path.join(screenshotDirectory, '..', 'chat-page-weight.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`chat page weight: ${report.transferredKB} KB transferred (${report.uncompressedKB} KB uncompressed) in ${report.requests} requests`);
  assert.ok(report.transferredKB < 120, `the chat page should stay light; it transferred ${report.transferredKB} KB`);
});

test('servers: add server-everything over stdio and see it turn green', async () => {
  await page.goto(`${switchboard.origin}/#/servers`);
  await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
  await page.getByRole('button', { name: '+ Add server' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.getByText('receives the parts of conversations').waitFor();
  await dialog.getByRole('button', { name: 'Everything (demo)' }).click();
  await dialog.getByLabel('Command').fill(process.execPath);
  await dialog.getByLabel('Arguments (one per line)').fill(`${everythingServerScript}\nstdio`);
  await dialog.getByRole('button', { name: 'Add server' }).click();
  const card = page.locator('[data-server-name="everything"]');
  await card.locator('.status-dot[data-status="green"]').waitFor({ timeout: 30000 });
  assert.match((await card.locator('.status-label').textContent()).trim(), /^(Connected|Ready)/);
  await saveScreenshot(page, '04-servers');
});

test('servers: turning a tool off is saved', async () => {
  const card = page.locator('[data-server-name="everything"]');
  await card.locator('summary', { hasText: 'Tools' }).click();
  const toggle = card.getByRole('switch', { name: 'Enable echo' });
  await toggle.waitFor();
  assert.equal(await toggle.isChecked(), true);
  await toggle.click();
  await page.getByText('echo disabled.').waitFor();
  const serverId = await card.getAttribute('data-server-id');
  const capabilities = await apiCall(switchboard, 'GET', `/api/mcp/servers/${serverId}/capabilities`);
  const echo = (capabilities.tools ?? []).find((tool) => tool.name === 'echo');
  assert.equal(echo.is_enabled ?? echo.enabled, false);
  await saveScreenshot(page, '05-server-tools');
  await toggle.click();
  await page.getByText('echo enabled.').waitFor();
  await card.getByLabel('Approval policy for echo').selectOption('ALWAYS_DENY');
  await page.getByText('Approval for echo: never allow.').waitFor();
  const { policies } = await apiCall(switchboard, 'GET', `/api/mcp/policies?server_id=${serverId}`);
  assert.equal(policies.find((policy) => policy.tool_name === 'echo')?.policy, 'ALWAYS_DENY');
  await card.getByLabel('Approval policy for echo').selectOption('');
  await page.getByText('Approval for echo: default.').waitFor();
});

test('xss: markup in a tool result is shown as text and never runs', async () => {
  const card = page.locator('[data-server-name="everything"]');
  await card.getByRole('button', { name: 'Try echo' }).click();
  await card.getByLabel('Arguments for echo (JSON)').fill(JSON.stringify({ message: XSS_PAYLOAD }));
  await card.getByRole('button', { name: 'Call echo' }).click();
  const result = card.locator('.try-result-text');
  await result.waitFor();
  assert.match(await result.textContent(), /<img src=x onerror=/);
  await card.locator('.json-viewer').first().getByRole('button', { name: 'Expand all' }).click();
  assert.equal(await card.locator('.try-row img, .try-row script').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss ?? null), null);
  await saveScreenshot(page, '06-xss-inert');
});

test('approval: a call that needs approval waits for the user, who approves it once', async () => {
  // The kg server's read-only tools ship as ALWAYS_ALLOW; ask for this one (the policy API is
  // the set-up here — the Servers page's policy select is exercised with the tool toggle).
  const { servers } = await apiCall(switchboard, 'GET', '/api/mcp/servers');
  const kg = servers.find((server) => server.name === 'kg');
  await apiCall(switchboard, 'PUT', `/api/mcp/servers/${kg.id}/tools/schema_version/policy`, { policy: 'ASK_USER' });
  await page.click('nav >> text=Chat');
  await page.getByRole('button', { name: '+ New conversation' }).click();
  const turn = await askAndWaitForAnswer("What's the schema version?");
  const approval = turn.locator('.approval-card');
  await approval.waitFor();
  assert.match(await approval.textContent(), /schema_version/);
  assert.match(await approval.locator('.countdown').textContent(), /^\d+:\d\d$/);
  await saveScreenshot(page, '07-approval');
  await approval.getByRole('button', { name: 'Approve once' }).click();
  await approval.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
  await waitForTurnToFinish(turn);
  assert.equal(await turn.locator('.tool-call').filter({ hasText: 'schema_version' }).first().getAttribute('data-status'), 'completed');
});

test('knowledge graph: types, relationships and changelog', async () => {
  await page.goto(`${switchboard.origin}/#/kg`);
  await page.locator('.kg-type').filter({ hasText: 'Document' }).first().waitFor();
  await saveScreenshot(page, '08-knowledge-graph');
  await page.getByRole('tab', { name: 'Relationships' }).click();
  await page.locator('#kg-panel table').waitFor();
  await page.getByRole('tab', { name: 'Changelog' }).click();
  await page.locator('#kg-panel table').waitFor();
  await saveScreenshot(page, '09-knowledge-graph-changelog');
});

test('audit: the tool calls of this session are listed and filterable', async () => {
  await page.goto(`${switchboard.origin}/#/audit`);
  await page.locator('.audit-table tbody tr').first().waitFor();
  await page.getByLabel('Tool').fill('schema_version');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.locator('.audit-table tbody tr').first().waitFor();
  const tools = await page.locator('.audit-table tbody tr td:nth-child(4)').allTextContents();
  assert.ok(tools.length > 0 && tools.every((text) => text.includes('schema_version')), `filtered rows: ${tools}`);
  await saveScreenshot(page, '10-audit');
});

test('phone width: the chat stays usable', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${switchboard.origin}/#/chat`);
  await page.locator('.example-question').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at phone width`);
  await saveScreenshot(page, '11-chat-phone');
  await page.setViewportSize({ width: 1280, height: 860 });
});

test('no script errors on any page', () => {
  // Failed HTTP answers are shown to the user in words and tested where they matter; what must
  // never happen is a script error.
  const unexpected = pageErrors.filter((error) => !/Failed to load resource/.test(error));
  assert.deepEqual(unexpected, []);
});
