// The API reference page (/api/docs) in a real browser against the real binary: it reads the
// server's own OpenAPI document and lists every operation by tag, with parameters, bodies,
// responses and the schemas section, under the UI's Content-Security-Policy (no page errors).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { startSwitchboard } from './support/switchboard.js';

let switchboard;
let browser;
let page;
let pageErrors;

before(async () => {
  switchboard = await startSwitchboard();
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  pageErrors = watchPageErrors(page);
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

test('the reference lists every operation of the document by tag, with its schemas', async () => {
  const document = await (await fetch(`${switchboard.origin}/api/openapi.json`)).json();
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    ['get', 'post', 'put', 'patch', 'delete'].filter((method) => item[method]).map((method) => ({ method, path })));
  await page.goto(`${switchboard.origin}/api/docs`);
  await page.locator('.api-operation').first().waitFor();
  assert.equal(await page.locator('.api-operation').count(), operations.length);
  const chat = page.locator('#tag-chat .api-operation', { hasText: '/chat/stream' }).first();
  await chat.locator('summary').click();
  const body = await chat.textContent();
  assert.match(body, /Request body/);
  assert.match(body, /conversation_id/);
  assert.match(body, /text\/event-stream/);
  assert.match(body, /SseMessage/);
  const schemaCount = Object.keys(document.components.schemas).length;
  assert.equal(await page.locator('.api-schema-component').count(), schemaCount);
  await page.click('#api-nav a[href="#schemas"]');
  assert.match(await page.locator('#schema-SseEvent').textContent(), /one of/);
  await page.fill('#api-filter', '/sync');
  assert.equal(await page.locator('.api-operation:visible').count(), 1);
  await saveScreenshot(page, 'api-docs');
  assert.deepEqual(pageErrors, []);
});
