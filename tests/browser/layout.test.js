// Layout checks of the web UI against the real `switchboard serve` binary: what a person sees
// must not overlap, cut or break words in odd places. Measured from the browser's own layout
// (bounding boxes, line boxes of text), not from class names, so a test fails on what looks
// wrong whatever the markup is.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, saveScreenshot, watchPageErrors } from './support/chromium.js';
import { apiCall, startSwitchboard } from './support/switchboard.js';
import { askAndWait } from './support/chat.js';

let switchboard;
let browser;
let page;
let pageErrors;

before(async () => {
  switchboard = await startSwitchboard();
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  pageErrors = watchPageErrors(page);
  await page.goto(`${switchboard.origin}/`);
  await page.fill('#token-input', switchboard.token);
  await page.click('form button[type=submit]');
  await page.locator('.example-question').first().waitFor();
});

after(async () => {
  await browser?.close();
  await switchboard?.stop();
});

/** Whether two boxes share any area. */
function overlap(a, b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/**
 * Where the text of `element` wraps: for each line after the first, the characters just before
 * and after the break (measured with one Range per character).
 */
function lineBreaks(locator) {
  return locator.evaluate((element) => {
    const characters = [];
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let offset = 0; offset < node.data.length; offset += 1) {
        const range = document.createRange();
        range.setStart(node, offset);
        range.setEnd(node, offset + 1);
        const rect = range.getClientRects()[0];
        if (rect) characters.push({ character: node.data[offset], top: Math.round(rect.top) });
      }
    }
    const breaks = [];
    for (let index = 1; index < characters.length; index += 1) {
      if (characters[index].top > characters[index - 1].top + 2) {
        breaks.push({ before: characters[index - 1].character, after: characters[index].character });
      }
    }
    return breaks;
  });
}

const AUDIT_WIDTHS = [1280, 1024, 760, 390];

async function openAudit(width) {
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${switchboard.origin}/#/audit`);
  await page.locator('.audit-table tbody tr').first().waitFor();
}

test('audit: the From and To inputs do not overlap each other or their neighbours', async () => {
  await askAndWait(page, "What's the schema version?");
  try {
    for (const width of AUDIT_WIDTHS) {
      await openAudit(width);
      const boxes = [];
      for (const name of ['from', 'to', 'server', 'tool', 'user', 'action', 'status']) {
        boxes.push({ name, box: await page.locator(`#audit-${name}`).boundingBox() });
      }
      for (let first = 0; first < boxes.length; first += 1) {
        for (let second = first + 1; second < boxes.length; second += 1) {
          assert.ok(!overlap(boxes[first].box, boxes[second].box),
            `at ${width}px the ${boxes[first].name} and ${boxes[second].name} filters overlap: ${JSON.stringify([boxes[first].box, boxes[second].box])}`);
        }
      }
      await saveScreenshot(page, `layout-audit-${width}`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 860 });
  }
});

test('audit: an action such as tool_call.completed wraps only at its dots', async () => {
  try {
    for (const width of AUDIT_WIDTHS) {
      await openAudit(width);
      const actionCells = page.locator('.audit-table tbody tr td:nth-child(2)');
      const count = await actionCells.count();
      assert.ok(count > 0);
      for (let index = 0; index < count; index += 1) {
        const cell = actionCells.nth(index);
        const text = (await cell.innerText()).replace(/\s+/g, '');
        for (const { before, after } of await lineBreaks(cell)) {
          assert.ok(before === '.' || after === '.', `at ${width}px the action "${text}" breaks inside a word, between "${before}" and "${after}"`);
        }
      }
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 860 });
  }
});

test('audit: who approved a call (a policy such as "policy:workspace") is shown whole', async () => {
  await openAudit(1280);
  const approvals = await page.locator('.audit-table tbody tr td:nth-child(7)').allInnerTexts();
  const byPolicy = approvals.filter((text) => /by policy:/.test(text));
  assert.ok(byPolicy.length > 0, `some call was approved by a policy: ${JSON.stringify(approvals)}`);
  for (const text of byPolicy) {
    assert.doesNotMatch(text, /…/, `who approved is shown whole: "${text}"`);
    assert.match(text, /by policy:[a-z_]{3,}/, `who approved is shown whole: "${text}"`);
  }
});

test('chat: the pill of an unavailable server wraps inside the answer', async () => {
  await apiCall(switchboard, 'POST', '/api/mcp/servers', {
    name: 'absent-with-a-long-reason',
    transport: 'stdio',
    command: 'sh',
    args: ['-c', 'echo "the configuration file /etc/an/unusually/long/path/that/explains/why/this/server/cannot/start/config.json could not be read because it does not exist" >&2; exit 3'],
  });
  await page.setViewportSize({ width: 760, height: 860 });
  try {
    await page.goto(`${switchboard.origin}/#/chat`);
    await page.locator('.example-question').first().waitFor();
    const turn = await askAndWait(page, "What's the schema version?");
    const pill = turn.locator('.message-meta .badge', { hasText: 'absent-with-a-long-reason unavailable' });
    await pill.waitFor();
    const pillBox = await pill.boundingBox();
    const turnBox = await turn.boundingBox();
    const viewport = page.viewportSize();
    assert.ok(pillBox.x + pillBox.width <= turnBox.x + turnBox.width + 1,
      `the pill runs out of the answer: ${JSON.stringify({ pillBox, turnBox })}`);
    assert.ok(pillBox.x + pillBox.width <= viewport.width, 'the pill runs out of the window');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await saveScreenshot(page, 'layout-chat-unavailable-pill');
  } finally {
    await page.setViewportSize({ width: 1280, height: 860 });
  }
});

test('servers: a long stdio command line is cut to one line, the whole line on hover', async () => {
  const longArguments = Array.from({ length: 30 }, (_, index) => `--option-number-${index}=/some/fairly/long/path/${index}`);
  await apiCall(switchboard, 'POST', '/api/mcp/servers', {
    name: 'long-command',
    transport: 'stdio',
    command: 'sh',
    args: ['-c', 'sleep 600', ...longArguments],
  });
  await page.goto(`${switchboard.origin}/#/servers`);
  const longCard = page.locator('[data-server-name="long-command"]');
  await longCard.waitFor();
  const endpoint = longCard.getByText('--option-number-0', { exact: false }).first();
  const fullLine = ['sh', '-c', 'sleep 600', ...longArguments].join(' ');
  assert.equal(await endpoint.getAttribute('title'), fullLine, 'the whole command line is in the title');
  const endpointBox = await endpoint.boundingBox();
  const lineHeight = await endpoint.evaluate((element) => parseFloat(getComputedStyle(element).lineHeight) || 20);
  assert.ok(endpointBox.height <= lineHeight * 1.5, `the command line takes ${endpointBox.height}px, more than one line (${lineHeight}px)`);
  const cardBox = await longCard.boundingBox();
  const kgCard = page.locator('[data-server-name="kg"]');
  const kgBox = await kgCard.boundingBox();
  assert.ok(cardBox.height <= kgBox.height + lineHeight * 2,
    `the long command's card is ${cardBox.height}px tall against ${kgBox.height}px for kg`);
  assert.ok(endpointBox.x + endpointBox.width <= cardBox.x + cardBox.width + 1, 'the command line stays inside its card');
  await saveScreenshot(page, 'layout-servers-long-command');
});

test('layout pages: no script errors', () => {
  assert.deepEqual(pageErrors.filter((error) => !/Failed to load resource/.test(error)), []);
});
