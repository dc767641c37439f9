// An attached resource kept current in the open conversation (issue 12), in headless Chromium
// against the real binary and a FastMCP server (the Python SDK's, via our fixture
// crates/server/tests/fixtures/resource_updates_server.py, which declares resource subscriptions
// and changes a note when told): a question attached `fixture://note/a`; while the conversation
// is open the page holds its attachment-updates stream, so when the server changes the note the
// chip shows it was updated, and the next answer's model is sent the new contents. Leaving the
// conversation releases the server's subscription.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { repositoryRoot, saveScreenshot } from './support/chromium.js';
import { apiCall, startBrowserSession } from './support/switchboard.js';
import { startFakeOpenAi } from './support/fake-openai-server.js';

const NOTE = 'fixture://note/a';
const python = path.join(repositoryRoot, 'interop', '.venv', 'bin', 'python');
const fixture = path.join(repositoryRoot, 'crates', 'server', 'tests', 'fixtures', 'resource_updates_server.py');

let fake;
let session;
let notes;
let notesPort;

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function untilListening(port) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    assert.ok(Date.now() < deadline, 'the notes fixture did not listen');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function control(route, method = 'POST') {
  const response = await fetch(`http://127.0.0.1:${notesPort}/control/${route}`, { method });
  return response.json();
}

async function untilSubscriptions(expected) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const { subscriptions } = await control('subscriptions', 'GET');
    if (JSON.stringify(subscriptions) === JSON.stringify(expected)) return;
    assert.ok(Date.now() < deadline, `subscriptions stayed ${JSON.stringify(subscriptions)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

before(async () => {
  notesPort = await freePort();
  notes = spawn(python, [fixture, String(notesPort)], { stdio: 'ignore' });
  await untilListening(notesPort);
  fake = await startFakeOpenAi();
  session = await startBrowserSession({
    env: { SWITCHBOARD_LLM_PROVIDER: 'openai', SWITCHBOARD_LLM_BASE_URL: fake.baseUrl('house'), SWITCHBOARD_LLM_MODEL: 'house-model' },
  });
  const server = await apiCall(session.switchboard, 'POST', '/api/mcp/servers', { name: 'notes', transport: 'streamable_http', url: `http://127.0.0.1:${notesPort}/mcp` });
  await apiCall(session.switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
});

after(async () => {
  await session?.close();
  await fake?.close();
  notes?.kill();
});

test('attachment updates: the open conversation follows its attached note; the chip shows the change and the model reads it', async () => {
  const { switchboard, page, pageErrors } = session;
  await apiCall(switchboard, 'POST', '/chat/stream', { message: 'Keep an eye on this note', attachments: [{ server: 'notes', uri: NOTE }] });
  const { conversations } = await apiCall(switchboard, 'GET', '/chat/conversations?limit=1');
  const conversationId = conversations[0].id;

  await page.goto(`${switchboard.origin}/#/chat/${conversationId}`);
  const chip = page.locator(`.message-user .attachment-chip[data-uri="${NOTE}"]`);
  await chip.waitFor();
  assert.equal(await chip.getAttribute('data-refreshed-at'), null);
  // The page holds the watch: the server is subscribed on the person's session.
  await untilSubscriptions({ [NOTE]: 1 });

  await control(`update?uri=${encodeURIComponent(NOTE)}`);
  await page.waitForFunction((uri) => document.querySelector(`.attachment-chip[data-uri="${uri}"]`)?.dataset.refreshedAt, NOTE, { timeout: 30000 });
  assert.match(await chip.textContent(), /updated/);
  await saveScreenshot(page, 'attachment-updated');

  // The next question's model reads the note as it is now.
  const asked = fake.requests.length;
  await page.fill('#chat-input', 'What does the note say now?');
  await page.keyboard.press('Enter');
  await page.locator('.message-assistant').last().locator('.answer', { hasText: 'Answered by' }).waitFor({ timeout: 30000 });
  assert.equal(fake.requests.length, asked + 1);
  const sent = JSON.stringify(fake.requests[fake.requests.length - 1].body.messages);
  assert.ok(sent.includes('note a (revision 1)'), sent);

  // Leaving the conversation lets go of the subscription.
  await page.goto(`${switchboard.origin}/#/chat`);
  await untilSubscriptions({});
  assert.deepEqual(pageErrors, []);
});
