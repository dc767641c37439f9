// Tool calls that become MCP tasks (issue 12), in headless Chromium against the real binary and
// the task fixture (`task-fixture`, built from crates/test-support on rmcp's server side and
// its TaskManager, an official SDK's implementation of SEP-2663), answered by the offline
// planner. The binary's call timeout is 1 s, shorter than every task here.
// - A 4 s task: its card shows the task working with the server's status messages as they
//   change ("gathering sources", then "writing the report"), then the final result; reloading
//   the conversation shows the stored result.
// - A 60 s task: its card's Cancel button sends tasks/cancel to the server (the fixture reports
//   it), the card says the task was cancelled, and the answer goes on to its end.
// - A 16 s task whose Switchboard is stopped (SIGTERM, 1 s grace) and started again on the same
//   store: the conversation opened after the restart shows the task still working with the
//   status message stored before the stop ("gathering sources"), the card moves on to the new
//   process's latest stored message ("writing the report") while the page watches, a reload
//   shows that message at once, then the card shows the result once the new process has
//   followed the task to its end; it was never cancelled.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchChromium, repositoryRoot, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, serveWebFromDiskWhenAsked, startSwitchboard, switchboardBinary } from './support/switchboard.js';
import { askInNewConversation } from './support/chat.js';

let switchboard;
let fixture;
let browser;
let page;
let pageErrors;

/** The fixture binary: $SWITCHBOARD_TASK_FIXTURE, else beside the switchboard binary under test. */
function fixtureBinary() {
  const binary = process.env.SWITCHBOARD_TASK_FIXTURE ?? path.join(path.dirname(switchboardBinary()), 'task-fixture');
  if (!existsSync(binary)) {
    throw new Error(`task-fixture not found at ${binary}: run \`cargo build -p switchboard-test-support --bin task-fixture\` (run.sh does)`);
  }
  return binary;
}

/** Starts the fixture; resolves to `{url, cancelled, stop}` (`cancelled`: task ids it saw cancelled). */
async function startTaskFixture() {
  const child = spawn(fixtureBinary(), [], { cwd: repositoryRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const cancelled = [];
  let buffered = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('task-fixture did not start within 30 s')), 30000);
    child.stdout.on('data', (chunk) => {
      buffered += chunk.toString();
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const listening = line.match(/^task fixture at (\S+)/);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]);
        }
        const cancel = line.match(/^cancelled (\S+)/);
        if (cancel) cancelled.push(cancel[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`task-fixture exited early (${code})`)));
  });
  child.removeAllListeners('exit');
  return { url, cancelled, stop: () => { child.stdin.end(); child.kill('SIGTERM'); } };
}

before(async () => {
  fixture = await startTaskFixture();
  switchboard = await startSwitchboard({ env: { SWITCHBOARD_MCP_TOOL_CALL_TIMEOUT_SECS: '1', SWITCHBOARD_MCP_TOOL_CALL_MAX_TIMEOUT_SECS: '1' } });
  const server = await apiCall(switchboard, 'POST', '/api/mcp/servers', { name: 'reports', transport: 'streamable_http', url: fixture.url });
  await apiCall(switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
  await apiCall(switchboard, 'PUT', `/api/mcp/servers/${server.id}/tools/slow_report/policy`, { policy: 'ALWAYS_ALLOW' });
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
  fixture?.stop();
});

/** Resolves once `condition()` holds, checked every 50 ms; rejects after `timeoutMs`. */
async function until(condition, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The texts the card's task line showed, recorded in the page as they change. */
async function recordTaskLines(turn) {
  await turn.evaluate((element) => {
    window.taskLines = [];
    new MutationObserver(() => {
      const line = element.querySelector('.tool-call[data-status=task] .tool-status');
      const text = line?.textContent ?? '';
      if (text && window.taskLines.at(-1) !== text) window.taskLines.push(text);
    }).observe(element, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

test('tasks: the card shows the task working and its status messages, then its result', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'slow report on "tides", 4 seconds');
  const card = turn.locator('.tool-call[data-status=task]');
  await card.waitFor({ timeout: 30000 });
  await recordTaskLines(turn);
  assert.equal(await card.getAttribute('data-task-status'), 'working');
  assert.equal(await card.locator('.tool-task-state').textContent(), 'Task working');
  await saveScreenshot(page, 'tasks-01-working');
  await turn.locator('.tool-call[data-status=task] .tool-task-message', { hasText: 'writing the report' }).waitFor({ timeout: 20000 });
  await turn.locator('.tool-call[data-status=completed]').waitFor({ timeout: 30000 });
  const lines = await page.evaluate(() => window.taskLines);
  assert.ok(lines.some((line) => line.includes('writing the report')), `the status message changed in place: ${JSON.stringify(lines)}`);
  assert.match(await turn.locator('.tool-call[data-status=completed] .tool-status').textContent(), /slow_report/);
  await turn.locator('.tool-call[data-status=completed] summary').click();
  await turn.getByText('report ready: tides').first().waitFor({ timeout: 10000 });
  await saveScreenshot(page, 'tasks-02-completed');

  await page.reload();
  const stored = page.locator('.message-assistant .tool-call[data-status=completed]').first();
  await stored.waitFor({ timeout: 20000 });
  await stored.locator('summary').click();
  await page.locator('.message-assistant').getByText('report ready: tides').first().waitFor({ timeout: 10000 });
});

test('tasks: the Cancel button cancels the task upstream and the answer goes on', async () => {
  const turn = await askInNewConversation(page, switchboard.origin, 'slow report on "storms", 60 seconds');
  const cancel = turn.getByRole('button', { name: 'Cancel task' });
  await cancel.waitFor({ timeout: 30000 });
  const before = fixture.cancelled.length;
  await cancel.click();
  await turn.locator('.tool-call[data-status=unknown]', { hasText: 'Task cancelled' }).waitFor({ timeout: 20000 });
  // The fixture reports the cancels it saw on its own schedule (every 50 ms), which may be
  // after the card has heard of the end: wait for its report.
  await until(() => fixture.cancelled.length > before, 10000);
  assert.equal(fixture.cancelled.length, before + 1, 'tasks/cancel reached the server once');
  await page.waitForFunction((element) => !element.hasAttribute('aria-busy'), await turn.elementHandle(), { timeout: 30000 });
  await saveScreenshot(page, 'tasks-03-cancelled');
});

test('tasks: after a restart the conversation shows the task working, then its result', async () => {
  const env = { SWITCHBOARD_MCP_TOOL_CALL_TIMEOUT_SECS: '1', SWITCHBOARD_MCP_TOOL_CALL_MAX_TIMEOUT_SECS: '1', SWITCHBOARD_SERVER_SHUTDOWN_GRACE_SECS: '1' };
  const dataDirectory = mkdtempSync(path.join(os.tmpdir(), 'switchboard-browser-tasks-'));
  let first;
  let second;
  try {
    first = await startSwitchboard({ env, dataDirectory });
    const server = await apiCall(first, 'POST', '/api/mcp/servers', { name: 'reports', transport: 'streamable_http', url: fixture.url });
    await apiCall(first, 'POST', `/api/mcp/servers/${server.id}/sync`);
    await apiCall(first, 'PUT', `/api/mcp/servers/${server.id}/tools/slow_report/policy`, { policy: 'ALWAYS_ALLOW' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await serveWebFromDiskWhenAsked(context);
    await context.addInitScript((token) => sessionStorage.setItem('switchboard.token', token), first.token);
    const restartPage = await context.newPage();
    const errors = watchPageErrors(restartPage);
    const turn = await askInNewConversation(restartPage, first.origin, 'slow report on "waves", 16 seconds');
    await turn.locator('.tool-call[data-status=task]').waitFor({ timeout: 30000 });
    const conversationId = decodeURIComponent(new URL(restartPage.url()).hash.replace('#/chat/', ''));
    const cancelledBefore = fixture.cancelled.length;
    await first.stop();

    second = await startSwitchboard({ env, dataDirectory, token: first.token });
    await restartPage.goto(`${second.origin}/#/chat/${encodeURIComponent(conversationId)}`);
    const working = restartPage.locator('.message-assistant .tool-call[data-status=task]');
    await working.waitFor({ timeout: 20000 });
    assert.equal(await working.locator('.tool-task-state').textContent(), 'Task working');
    // No answer runs after the restart: the message comes from the stored call (the first
    // process heard it when the task was created; the second stores what it hears).
    assert.match(await working.locator('.tool-task-message').textContent(), /gathering sources|writing the report/);
    await saveScreenshot(restartPage, 'tasks-04-after-restart');
    // Half way (8 s), the new process hears the next message and stores it; the watching page
    // shows it in place, and a reload shows it from the stored call at once.
    await working.locator('.tool-task-message', { hasText: 'writing the report' }).waitFor({ timeout: 20000 });
    await restartPage.reload();
    const reloaded = restartPage.locator('.message-assistant .tool-call[data-status=task]');
    await reloaded.waitFor({ timeout: 5000 });
    assert.equal(await reloaded.locator('.tool-task-message').textContent(), 'writing the report');
    const done = restartPage.locator('.message-assistant .tool-call[data-status=completed]');
    await done.waitFor({ timeout: 40000 });
    await done.locator('summary').click();
    await restartPage.locator('.message-assistant').getByText('report ready: waves').first().waitFor({ timeout: 10000 });
    assert.equal(fixture.cancelled.length, cancelledBefore, 'the stop did not cancel the task');
    // The page's requests to the stopped first process were refused; nothing else went wrong.
    assert.deepEqual(errors.filter((error) => !error.includes('net::ERR_CONNECTION_REFUSED')), []);
    await context.close();
  } finally {
    await second?.stop();
    if (first && !second) await first.stop();
    rmSync(dataDirectory, { recursive: true, force: true });
  }
});

test('tasks: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
