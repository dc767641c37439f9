// MCP Apps in the chat (issue 12), in headless Chromium against the real binary: the official
// example app server `@modelcontextprotocol/server-basic-vanillajs` (software we did not write,
// its app built on the official ext-apps App) renders under its tool call, receives the tool
// result, calls its own server's tool back through Switchboard, and is torn down when the
// conversation closes; our hostile fixture app (tests/apps/hostile-app-server.mjs) is refused the
// network, the page that frames it, storage, the top window and other servers' tools. A canary
// HTTP server of this test counts every request that reaches it. Writes the sandbox's table of
// what is allowed and refused, the page weight added and the time from tool result to app
// rendered to artifacts/mcp-apps.json.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchChromium, repositoryRoot, saveScreenshot, screenshotDirectory } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { askInNewConversation as askInNewConversation_ } from './support/chat.js';

const basicAppScript = path.join(repositoryRoot, 'interop', 'apps', 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');
const hostileAppScript = path.join(repositoryRoot, 'tests', 'apps', 'hostile-app-server.mjs');

let switchboard;
let browser;
let page;
let pageErrors;
let canary;
const canaryHits = [];
const figures = {};

/** A server that records every request (and WebSocket upgrade) that reaches it. */
function startCanary() {
  return new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      canaryHits.push(request.url);
      response.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' });
      response.end('canary');
    });
    server.on('upgrade', (request, socket) => {
      canaryHits.push(`upgrade ${request.url}`);
      socket.destroy();
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

async function registerApp(name, args) {
  const server = await apiCall(switchboard, 'POST', '/api/mcp/servers', { name, transport: 'stdio', command: process.execPath, args });
  const synced = await apiCall(switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
  assert.ok(synced.tool_count > 0, `${name} lists its tools`);
  return { id: server.id };
}

async function allow(serverId, tool) {
  await apiCall(switchboard, 'PUT', `/api/mcp/servers/${serverId}/tools/${tool}/policy`, { policy: 'ALWAYS_ALLOW' });
}

before(async () => {
  canary = await startCanary();
  const canaryOrigin = `http://127.0.0.1:${canary.address().port}`;
  switchboard = await startSwitchboard();
  const basic = await registerApp('basic-app', [basicAppScript, '--stdio']);
  const hostile = await registerApp('hostile-app', [hostileAppScript, '--targets', JSON.stringify({ switchboard: switchboard.origin, canary: canaryOrigin })]);
  await allow(basic.id, 'get-time');
  await allow(hostile.id, 'probe');
  await allow(hostile.id, 'note');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // The UI's own tab only: the script also runs in the apps' sandboxed frames, which have no storage.
  await context.addInitScript((token) => {
    if (window === window.top) sessionStorage.setItem('switchboard.token', token);
  }, switchboard.token);
  page = await context.newPage();
  // Errors of the UI's own page only: the hostile app's refused attempts log errors in its
  // frame, and the API's 403 to its calls of other servers' tools is the refusal under test.
  pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const where = message.location()?.url ?? '';
    if (message.type() === 'error' && where.startsWith(switchboard.origin) && !where.endsWith('/app/tool-calls')) {
      pageErrors.push(`console: ${message.text()} (${where})`);
    }
  });
});

after(async () => {
  mkdirSync(path.join(screenshotDirectory, '..'), { recursive: true });
  writeFileSync(path.join(screenshotDirectory, '..', 'mcp-apps.json'), `${JSON.stringify(figures, null, 2)}\n`);
  await browser?.close();
  await switchboard?.stop();
  canary?.close();
});

/** Asks `question` in a new conversation; resolves to the new answer's element. */
function askInNewConversation(question) {
  return askInNewConversation_(page, switchboard.origin, question);
}

/** The app's frame (a cross-origin frame: Playwright reaches it through the browser). */
async function appFrame(turn) {
  const iframe = turn.locator('.mcp-app iframe');
  await iframe.waitFor({ timeout: 30000 });
  return (await iframe.elementHandle()).contentFrame();
}

test('apps: the basic vanillajs example renders under its tool call, gets the result, calls its server back and is torn down', async () => {
  const turn = await askInNewConversation('What is the server time?');
  // The moment the tool call's result reached the page (its view turns completed).
  await page.evaluate(() => {
    window.__toolResultAt = null;
    const observer = new MutationObserver(() => {
      if (!window.__toolResultAt && document.querySelector('.tool-call[data-status=completed]')) {
        window.__toolResultAt = performance.timeOrigin + performance.now();
      }
    });
    observer.observe(document.body, { subtree: true, attributes: true, childList: true });
  });
  const frame = await appFrame(turn);
  await frame.waitForFunction(() => /\d{4}-\d\d-\d\dT/.test(document.getElementById('server-time')?.textContent ?? ''), null, { timeout: 30000, polling: 'raf' });
  const renderedAt = await frame.evaluate(() => performance.timeOrigin + performance.now());
  const resultAt = await page.evaluate(() => window.__toolResultAt);
  assert.ok(resultAt, 'the tool call completed in the page');
  figures.tool_result_to_app_rendered_ms = Math.max(0, Math.round(renderedAt - resultAt));
  console.log(`MCP App: ${figures.tool_result_to_app_rendered_ms} ms from tool result to the app showing it`);

  const shownTime = (await frame.locator('#server-time').textContent()).trim();
  const toolCall = turn.locator('.tool-call').filter({ hasText: 'get-time' }).first();
  assert.equal(await toolCall.getAttribute('data-status'), 'completed');
  assert.equal(await turn.locator('.mcp-app').getAttribute('data-state'), 'ready');
  assert.equal(new URL(await turn.locator('.mcp-app iframe').getAttribute('src')).origin === switchboard.origin, false, 'the app is not on the UI origin');
  assert.equal(await turn.locator('.mcp-app iframe').getAttribute('sandbox'), 'allow-scripts');
  await saveScreenshot(page, 'apps-01-basic-app');

  // The app's own call back to its server (the official App's callServerTool → tools/call).
  await frame.click('#get-time-btn');
  await frame.waitForFunction((before) => {
    const text = document.getElementById('server-time')?.textContent ?? '';
    return /\d{4}-\d\d-\d\dT/.test(text) && text !== before;
  }, shownTime, { timeout: 20000 });

  // Closing the conversation tears the app down.
  await page.getByRole('button', { name: '+ New conversation' }).click();
  await page.waitForFunction(() => document.querySelectorAll('.mcp-app iframe').length === 0, null, { timeout: 5000 });
  const basicAppTransfer = readFileSync(path.join(repositoryRoot, 'interop', 'apps', 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'mcp-app.html'));
  figures.basic_app_html_kb = +(basicAppTransfer.length / 1024).toFixed(1);
});

test('apps: a hostile app is refused the network, the page, storage, the top window and other servers\' tools', async () => {
  const hitsBefore = canaryHits.length;
  const turn = await askInNewConversation('Run the probe');
  const frame = await appFrame(turn);
  await frame.waitForFunction(() => document.body.dataset.done === 'true', null, { timeout: 45000 });
  const findings = JSON.parse(await frame.locator('#findings').textContent());
  console.log('hostile app findings:', findings);
  figures.sandbox = findings;
  await saveScreenshot(page, 'apps-02-hostile-app');

  assert.equal(findings.host, 'Switchboard');
  assert.equal(findings.display_mode, 'inline');
  assert.equal(findings.tool_result, JSON.stringify({ probed: true }), 'the app got its tool result');
  for (const probe of [
    'fetch_switchboard_api', 'fetch_canary', 'image_from_canary', 'websocket_to_canary',
    'read_parent_document', 'read_top_cookies', 'read_parent_session_storage_token',
    'own_cookies', 'own_local_storage', 'own_session_storage',
    'navigate_top_window', 'open_popup',
    'call_other_servers_tool', 'call_other_servers_tool_by_qualified_name',
  ]) {
    assert.match(findings[probe] ?? 'missing', /^refused/, `${probe}: ${findings[probe]}`);
  }
  assert.match(findings.call_other_servers_tool, /own server/);
  assert.equal(findings.call_own_app_only_tool, `allowed: ${JSON.stringify({ noted: 'from the app' })}`);
  assert.deepEqual(canaryHits.slice(hitsBefore), [], 'nothing the app tried reached the network');
  assert.equal(new URL(page.url()).origin, switchboard.origin, 'the top window stayed');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('switchboard.token')), switchboard.token);
});

test('apps: page weight added to the chat', () => {
  // Every module of the apps host (web/assets/pages/chat/app-*.js), which the chat page loads.
  const folder = path.join('web', 'assets', 'pages', 'chat');
  const files = readdirSync(path.join(repositoryRoot, folder)).filter((name) => /^app-.*\.js$/.test(name)).sort().map((name) => path.join(folder, name));
  assert.ok(files.length >= 6, files.join(', '));
  const bytes = files.map((file) => readFileSync(path.join(repositoryRoot, file)));
  figures.ui_added = {
    files,
    kb: +(bytes.reduce((sum, data) => sum + data.length, 0) / 1024).toFixed(1),
    gzip_kb: +(bytes.reduce((sum, data) => sum + gzipSync(data).length, 0) / 1024).toFixed(1),
  };
  console.log(`MCP Apps UI: ${figures.ui_added.kb} KB (${figures.ui_added.gzip_kb} KB gzip) added to the chat page`);
  assert.ok(figures.ui_added.gzip_kb < 16, 'the host side stays small');
});

test('apps: no script errors on the chat page', () => {
  assert.deepEqual(pageErrors, []);
});
