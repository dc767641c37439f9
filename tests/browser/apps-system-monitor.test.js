// A second official MCP Apps example (issue 12), in headless Chromium against the real binary:
// `@modelcontextprotocol/server-system-monitor` (software we did not write, its app built on the
// official ext-apps `App` with Chart.js bundled in its page). Its model tool `get-system-info`
// has the app; the app then polls the app-only tool `poll-system-stats` every 2 s, which the model
// is never offered. The test checks that the app renders under its tool call, is sent the tool
// input and result (as the app's own window received them), shows the host's name from the
// result, that its polling calls pass the approval gate only once the person approves them in
// the card under the app (and are audited with origin `app`), that it grows its frame to its
// content (`size-changed`), that its Stop button stops the calls, and that it is torn down when
// the conversation closes. Prints the time from tool result to the app showing it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { launchChromium, repositoryRoot, saveScreenshot } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { appFrame, recordAppMessages, registerApp, setToolPolicy, signedInAppsPage, toolCallCompletedAt } from './support/apps.js';
import { askInNewConversation } from './support/chat.js';

const systemMonitorScript = path.join(repositoryRoot, 'interop', 'apps', 'node_modules', '@modelcontextprotocol', 'server-system-monitor', 'dist', 'index.js');

let switchboard;
let browser;
let page;
let monitor;
const pageErrors = [];

before(async () => {
  switchboard = await startSwitchboard();
  monitor = await registerApp(switchboard, 'system-monitor', [systemMonitorScript, '--stdio']);
  // The model's call is allowed; the app's own polling is left to the default (ASK_USER).
  await setToolPolicy(switchboard, monitor, 'get-system-info', 'ALWAYS_ALLOW');
  browser = await launchChromium();
  ({ page } = await signedInAppsPage(browser, switchboard, pageErrors, recordAppMessages));
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

test('system monitor: the app-only poll tool is never offered to the model', async () => {
  // A turn through the chat API: its first event lists the tools offered to the model.
  const response = await fetch(`${switchboard.origin}/chat/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${switchboard.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Show the system info' }),
  });
  assert.equal(response.status, 200);
  const events = (await response.text()).split('\n').filter((line) => line.startsWith('data:')).map((line) => JSON.parse(line.slice(5)));
  const meta = events.find((event) => event.type === 'meta');
  const offered = meta.tools.filter((tool) => tool.server === 'system-monitor').map((tool) => tool.tool);
  assert.deepEqual(offered, ['get-system-info']);
  const called = events.filter((event) => event.type === 'mcp_tool' && event.status === 'started').map((event) => event.tool);
  assert.deepEqual(called, ['get-system-info']);
});

test('system monitor: renders with the tool input and result, polls through the approval gate, resizes, stops and is torn down', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'Show the system info');
  const frame = await appFrame(turn);

  // The result reached the app: it shows this machine's host name from `structuredContent`.
  await frame.waitForFunction((hostname) => document.getElementById('info-hostname')?.textContent === hostname, os.hostname(), { timeout: 30000, polling: 'raf' });
  const renderedAt = await frame.evaluate(() => performance.timeOrigin + performance.now());
  const toolCall = turn.locator('.tool-call').filter({ hasText: 'get-system-info' }).first();
  assert.equal(await toolCall.getAttribute('data-status'), 'completed');
  const toolResultAt = await toolCallCompletedAt(page, toolCall);
  assert.ok(toolResultAt, 'the page noted when the call completed');
  console.log(`system monitor: ${Math.max(0, Math.round(renderedAt - toolResultAt))} ms from tool result to the app showing it`);
  assert.equal(await turn.locator('.mcp-app').getAttribute('data-state'), 'ready');
  assert.equal(await frame.locator('#info-platform').textContent(), `${os.platform()} ${os.arch()}`);

  // What the app's window was sent, in order: the initialize answer, the input, the result.
  const received = await frame.evaluate(() => window.__hostMessages.map((message) => message.method ?? (message.result?.hostInfo ? 'initialize-result' : 'result')));
  const order = ['initialize-result', 'ui/notifications/tool-input', 'ui/notifications/tool-result'].map((name) => received.indexOf(name));
  assert.ok(order.every((index, position) => index >= 0 && (position === 0 || index > order[position - 1])), JSON.stringify(received));
  const input = await frame.evaluate(() => window.__hostMessages.find((message) => message.method === 'ui/notifications/tool-input'));
  assert.deepEqual(input.params, { arguments: {} });

  // The app starts polling its app-only tool: the call waits for the person in the card under
  // the app. Polls made while the first one waits wait too: each is approved ("Always allow"
  // remembers it, so later polls pass without asking).
  const card = turn.locator('.mcp-app .mcp-app-approvals .approval-card').first();
  await card.waitFor({ timeout: 20000 });
  assert.match(await card.locator('h3').textContent(), /Allow system-monitor · poll-system-stats\?/);
  assert.equal(await frame.locator('#memory-percent').textContent(), '--%', 'nothing polled before the person decides');
  await saveScreenshot(page, 'apps-system-monitor-01-approval');
  await card.getByRole('button', { name: 'Always allow' }).click();
  const deadline = Date.now() + 30000;
  while (!/^\d+(\.\d+)?%$/.test(await frame.locator('#memory-percent').textContent())) {
    assert.ok(Date.now() < deadline, 'the poll result reached the app');
    const waiting = turn.locator('.mcp-app .approval-card');
    if (await waiting.count() > 0) await waiting.first().getByRole('button', { name: 'Always allow' }).click().catch(() => {});
    await page.waitForTimeout(250);
  }
  await frame.waitForFunction(() => document.getElementById('info-uptime')?.textContent !== '--', null, { timeout: 20000 });
  await frame.waitForFunction(() => /^\d\d:\d\d:\d\d$/.test(document.getElementById('status-text')?.textContent ?? ''), null, { timeout: 20000 });

  // It grew its frame to its content (chart, memory bar, info list) through size-changed.
  await page.waitForFunction((element) => element.getBoundingClientRect().height > 300, await turn.locator('.mcp-app iframe').elementHandle(), { timeout: 20000 });
  const contentHeight = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
  const frameHeight = await turn.locator('.mcp-app iframe').evaluate((element) => element.getBoundingClientRect().height);
  assert.ok(Math.abs(frameHeight - Math.min(720, contentHeight)) <= 2, `frame ${frameHeight} px for content ${contentHeight} px`);
  await saveScreenshot(page, 'apps-system-monitor-02-polling');

  // More polls pass without asking, each audited as the app's call.
  const polls = async () => {
    const audit = await apiCall(switchboard, 'GET', '/api/audit?action=tool_call.&tool=poll-system-stats&limit=200');
    return audit.entries.filter((entry) => entry.details?.origin === 'app' && entry.action === 'tool_call.completed');
  };
  const polledBefore = (await polls()).length;
  assert.ok(polledBefore >= 1, 'the approved poll is audited as the app\'s');
  const moreDeadline = Date.now() + 20000;
  while ((await polls()).length < polledBefore + 2) {
    assert.ok(Date.now() < moreDeadline, 'the app goes on polling');
    await page.waitForTimeout(500);
  }
  assert.equal(await turn.locator('.mcp-app .approval-card').count(), 0, 'remembered: no more cards');

  // Stop: the app stops calling (its interval is 2 s: nothing is asked for the next 5 s).
  let requestsAfterStop = 0;
  await frame.click('#poll-toggle-btn');
  await frame.waitForFunction(() => document.getElementById('status-text')?.textContent === 'Stopped', null, { timeout: 10000 });
  const countRequest = (request) => { if (request.url().endsWith('/app/tool-calls')) requestsAfterStop += 1; };
  page.on('request', countRequest);
  await page.waitForTimeout(5000);
  page.off('request', countRequest);
  assert.equal(requestsAfterStop, 0, 'no polling after Stop');

  // Closing the conversation tears the app down.
  await page.getByRole('button', { name: '+ New conversation' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.mcp-app iframe').length === 0, null, { timeout: 5000 });
});

test('system monitor: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
