// The UI's JavaScript units (Markdown renderer, SSE parser and client, JSON viewer, elicitation
// form generator, tool summaries), run in real headless Chromium against the files in web/ served
// as the binary serves them. No Switchboard build needed.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium, watchPageErrors } from './support/chromium.js';
import { startStaticServer } from './support/static-server.js';

let browser;
let server;
let page;
let pageErrors;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
  page = await browser.newPage();
  pageErrors = watchPageErrors(page);
  await page.goto(`${server.origin}/blank`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Runs `fn(modules)` in the page with the named web/assets modules imported. */
function inPage(moduleNames, fn, argument) {
  return page.evaluate(async ({ moduleNames, source, argument }) => {
    const modules = {};
    for (const name of moduleNames) modules[name] = await import(name.includes('/') ? `/assets/dev/${name}.js` : `/assets/dev/lib/${name}.js`);
    // eslint-disable-next-line no-new-func
    return new Function('modules', 'argument', `return (${source})(modules, argument);`)(modules, argument);
  }, { moduleNames, source: fn.toString(), argument });
}

test('markdown: XSS payloads render as inert text', async () => {
  const payloads = [
    '<script>window.__xss = 1</script>',
    '<img src=x onerror="window.__xss=1">',
    '[click](javascript:window.__xss=1)',
    '[click](JaVaScRiPt:alert(1))',
    '[a](https://ok.example/"><img src=x onerror=window.__xss=1>)',
    '**<svg onload=window.__xss=1>**',
    '`<b>code</b>` and <iframe src="https://evil.example"></iframe>',
    '| a | b |\n|---|---|\n| <img src=x onerror=window.__xss=1> | ok |',
    '```html\n<script>window.__xss=1</script>\n```',
    '<https://example.com/"onmouseover="window.__xss=1>',
  ];
  const results = await inPage(['markdown'], async ({ markdown }, payloads) => {
    const container = document.createElement('div');
    document.body.append(container);
    const out = [];
    for (const payload of payloads) {
      container.innerHTML = markdown.renderMarkdown(payload);
      out.push({
        dangerous: container.querySelectorAll('script, img, iframe, svg, [onerror], [onload], [onmouseover]').length,
        javascriptLinks: [...container.querySelectorAll('a')].filter((a) => !/^https?:/.test(a.getAttribute('href'))).length,
        text: container.textContent,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { out, flagged: window.__xss ?? null };
  }, payloads);
  assert.equal(results.flagged, null);
  for (const [index, result] of results.out.entries()) {
    assert.equal(result.dangerous, 0, `payload ${index} produced an element: ${payloads[index]}`);
    assert.equal(result.javascriptLinks, 0, `payload ${index} produced a non-http link`);
  }
  assert.match(results.out[0].text, /<script>window.__xss = 1<\/script>/);
});

test('markdown: headings, emphasis, lists, tables, code, quotes and links', async () => {
  const source = [
    '# Title', '', 'Some **bold**, *italic*, ~~gone~~ and `x < y` text.', 'Second line.', '',
    '- one', '- two', '  - nested', '- three', '', '3. third', '4. fourth', '',
    '| Name | Count |', '|:-----|------:|', '| Document | 12 |', '| Project | 3 |', '',
    '```json', '{"a": "<b>"}', '```', '', '> quoted **text**', '',
    'See [docs](https://example.com/a?b=1&c=2) or https://example.org/x.', '', '---',
  ].join('\n');
  const shape = await inPage(['markdown'], ({ markdown }, source) => {
    const container = document.createElement('div');
    container.innerHTML = markdown.renderMarkdown(source);
    const links = [...container.querySelectorAll('a')];
    return {
      h1: container.querySelector('h1')?.textContent,
      strong: container.querySelector('p strong')?.textContent,
      em: container.querySelector('p em')?.textContent,
      del: container.querySelector('del')?.textContent,
      inlineCode: container.querySelector('p code')?.textContent,
      breaks: container.querySelectorAll('p br').length,
      topItems: container.querySelectorAll('ul:not(li ul) > li').length,
      nested: container.querySelector('ul li ul li')?.textContent,
      olStart: container.querySelector('ol')?.getAttribute('start'),
      headers: [...container.querySelectorAll('th')].map((th) => th.textContent),
      rightAligned: container.querySelector('td.align-right')?.textContent,
      rows: container.querySelectorAll('tbody tr').length,
      code: container.querySelector('pre code')?.textContent,
      codeLanguage: container.querySelector('pre')?.dataset.language,
      quoteBold: container.querySelector('blockquote strong')?.textContent,
      hrefs: links.map((a) => a.getAttribute('href')),
      rels: links.map((a) => a.rel),
      rule: container.querySelectorAll('hr').length,
    };
  }, source);
  assert.equal(shape.h1, 'Title');
  assert.equal(shape.strong, 'bold');
  assert.equal(shape.em, 'italic');
  assert.equal(shape.del, 'gone');
  assert.equal(shape.inlineCode, 'x < y');
  assert.equal(shape.breaks, 1);
  assert.equal(shape.topItems, 3);
  assert.equal(shape.nested, 'nested');
  assert.equal(shape.olStart, '3');
  assert.deepEqual(shape.headers, ['Name', 'Count']);
  assert.equal(shape.rightAligned, '12');
  assert.equal(shape.rows, 2);
  assert.equal(shape.code, '{"a": "<b>"}');
  assert.equal(shape.codeLanguage, 'json');
  assert.equal(shape.quoteBold, 'text');
  assert.deepEqual(shape.hrefs, ['https://example.com/a?b=1&c=2', 'https://example.org/x']);
  assert.ok(shape.rels.every((rel) => rel.includes('noopener')));
  assert.equal(shape.rule, 1);
});

test('markdown: partial input while streaming never throws and keeps text', async () => {
  const text = 'Here is a table:\n\n| a | b |\n|---|---|\n| 1 | **bo';
  const prefixes = await inPage(['markdown'], ({ markdown }, text) => {
    const container = document.createElement('div');
    const seen = [];
    for (let end = 0; end <= text.length; end += 1) {
      container.innerHTML = markdown.renderMarkdown(text.slice(0, end));
      seen.push(container.textContent.length);
    }
    container.innerHTML = markdown.renderMarkdown('```\nunclosed <code>');
    return { seen, unclosed: container.querySelector('pre code')?.textContent };
  }, text);
  assert.equal(prefixes.seen.length, text.length + 1);
  assert.equal(prefixes.unclosed, 'unclosed <code>');
});

test('sse: parser handles split chunks, CRLF, comments, multi-line data and a missing final blank line', async () => {
  const stream = ': heartbeat\r\ndata: {"type":"token","token":"He"}\r\n\r\nevent: mcp_tool\ndata: {"call_id":"c1",\ndata: "status":"started"}\n\ndata: {"type":"done"}';
  const events = await inPage(['sse'], ({ sse }, stream) => {
    const results = [];
    for (const size of [1, 2, 3, 7, stream.length]) {
      const parser = new sse.EventStreamParser();
      const events = [];
      for (let start = 0; start < stream.length; start += size) events.push(...parser.push(stream.slice(start, start + size)));
      events.push(...parser.finish());
      results.push(events.map(sse.toChatEvent));
    }
    return results;
  }, stream);
  for (const parsed of events) {
    assert.deepEqual(parsed, [
      { type: 'token', token: 'He' },
      { type: 'mcp_tool', call_id: 'c1', status: 'started' },
      { type: 'done' },
    ]);
  }
});

test('sse: client posts JSON with headers, delivers typed events, stops at done, and explains refusals', async () => {
  const outcome = await inPage(['sse'], async ({ sse }) => {
    const realFetch = window.fetch;
    const requests = [];
    window.fetch = async (url, init) => {
      requests.push({ url, method: init.method, auth: init.headers.Authorization, body: init.body, accept: init.headers.Accept });
      if (url === '/refused') {
        return new Response(JSON.stringify({ error: { code: 'forbidden', message: 'missing scope chat:use' } }), { status: 403 });
      }
      const encoder = new TextEncoder();
      const chunks = ['data: {"type":"meta","conversation_id":"c-1"}\n', '\ndata: {"type":"tok', 'en","token":"Hi"}\n\n', 'data: {"type":"done"}\n\n', 'data: {"type":"token","token":"late"}\n\n'];
      const body = new ReadableStream({ start(controller) { for (const chunk of chunks) controller.enqueue(encoder.encode(chunk)); controller.close(); } });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    try {
      const events = [];
      const result = await sse.streamServerSentEvents({ url: '/chat/stream', body: { message: 'hi' }, headers: { Authorization: 'Bearer t' }, onEvent: (event) => events.push(event) });
      let refusal = null;
      try {
        await sse.streamServerSentEvents({ url: '/refused', body: {}, onEvent: () => {} });
      } catch (error) {
        refusal = { message: error.message, status: error.status };
      }
      return { events, result, refusal, requests };
    } finally {
      window.fetch = realFetch;
    }
  });
  assert.deepEqual(outcome.events.map((event) => event.type), ['meta', 'token', 'done']);
  assert.equal(outcome.events[0].conversation_id, 'c-1');
  assert.equal(outcome.result.completed, true);
  assert.deepEqual(outcome.refusal, { message: 'missing scope chat:use', status: 403 });
  assert.equal(outcome.requests[0].method, 'POST');
  assert.equal(outcome.requests[0].auth, 'Bearer t');
  assert.equal(outcome.requests[0].accept, 'text/event-stream');
  assert.deepEqual(JSON.parse(outcome.requests[0].body), { message: 'hi' });
});

test('json viewer: collapsible, highlighted, lazy, and strings stay text', async () => {
  const shape = await inPage(['json-view'], ({ 'json-view': jsonView }) => {
    const value = { name: '<img src=x onerror="window.__xss=2">', count: 12, ok: true, none: null, nested: { deep: { deeper: [1, 2, 3] } } };
    const viewer = jsonView.renderJsonViewer(value, { label: 'Result', expandDepth: 1 });
    document.body.append(viewer);
    const before = viewer.querySelectorAll('.json-number').length;
    [...viewer.querySelectorAll('button')].find((button) => button.textContent === 'Expand all').click();
    const after = viewer.querySelectorAll('.json-number').length;
    const shape = {
      images: viewer.querySelectorAll('img').length,
      key: viewer.querySelector('.json-key')?.textContent,
      string: viewer.querySelector('.json-string')?.textContent,
      boolean: viewer.querySelector('.json-boolean')?.textContent,
      nullText: viewer.querySelector('.json-null')?.textContent,
      before,
      after,
      parsed: jsonView.parseJsonLoosely('{"a":1}'),
      notJson: jsonView.parseJsonLoosely('hello {'),
    };
    viewer.remove();
    return shape;
  });
  assert.equal(shape.images, 0);
  assert.equal(shape.key, '"name"');
  assert.equal(shape.string, '"<img src=x onerror=\\"window.__xss=2\\">"');
  assert.equal(shape.boolean, 'true');
  assert.equal(shape.nullText, 'null');
  assert.equal(shape.before, 1, 'only the first level is built before expanding');
  assert.equal(shape.after, 4);
  assert.deepEqual(shape.parsed, { a: 1 });
  assert.equal(shape.notJson, 'hello {');
});

test('schema form: fields from the requested schema, validation in words, typed content', async () => {
  const outcome = await inPage(['schema-form'], async ({ 'schema-form': schemaForm }) => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Your name', minLength: 2 },
        email: { type: 'string', format: 'email' },
        age: { type: 'integer', minimum: 18, maximum: 130 },
        subscribe: { type: 'boolean', default: true },
        color: { type: 'string', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
        size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, maxItems: 2 },
      },
      required: ['name', 'age', 'color'],
    };
    const fields = schemaForm.describeFields(schema);
    const missing = schemaForm.validateElicitationValues(fields, { name: '', age: '17', color: 'blue' });
    const responses = [];
    const form = schemaForm.renderElicitationForm(schema, { onRespond: (action, content) => { responses.push({ action, content }); } });
    document.body.append(form);
    form.requestSubmit();
    const errorsShown = [...form.querySelectorAll('.field-error')].map((node) => node.textContent).filter(Boolean);
    const labels = [...form.querySelectorAll('label')].map((label) => label.textContent);
    form.querySelector('[name=name]').value = 'Ada';
    form.querySelector('[name=email]').value = 'ada@example.com';
    form.querySelector('[name=age]').value = '36';
    form.querySelector('[name=color]').value = 'green';
    form.querySelector('[name=size]').value = 'l';
    form.querySelector('input[name=tags][value=b]').checked = true;
    form.requestSubmit();
    await new Promise((resolve) => setTimeout(resolve, 0));
    [...form.querySelectorAll('button')].find((button) => button.textContent === 'Decline').click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    form.remove();
    return { kinds: fields.map((field) => field.kind), missing: missing.errors, errorsShown, labels, responses };
  });
  assert.deepEqual(outcome.kinds, ['text', 'email', 'integer', 'boolean', 'select', 'select', 'multiselect']);
  assert.deepEqual(outcome.missing, { name: 'Your name is required.', age: 'Age must be at least 18.', color: 'Choose one of the options for Color.' });
  assert.ok(outcome.errorsShown.includes('Your name is required.'));
  assert.ok(outcome.labels.some((label) => label.startsWith('Your name')));
  assert.deepEqual(outcome.responses[0], { action: 'accept', content: { name: 'Ada', email: 'ada@example.com', age: 36, subscribe: true, color: 'green', size: 'l', tags: ['b'] } });
  assert.deepEqual(outcome.responses[1], { action: 'decline', content: undefined });
});

test('tool summaries read well for common result shapes', async () => {
  const summaries = await inPage(['tool-summary'], ({ 'tool-summary': summary }) => ({
    running: summary.runningLabel('kg', 'schema_version'),
    types: summary.summariseResult({ structuredContent: { object_types: new Array(12).fill({}) } }),
    typeInfo: summary.summariseResult({ structuredContent: { schema_version: 'v', types: new Array(6).fill({}), relationships: [] } }),
    oneChange: summary.summariseResult({ content: [{ type: 'text', text: '{"changes":[{"kind":"added"}]}' }] }),
    version: summary.summariseResult({ structuredContent: { version: '57c52257693ae983', object_type_count: 5 } }),
    total: summary.summariseResult({ structuredContent: { objects: [1, 2], total: 40 } }),
    text: summary.summariseResult({ content: [{ type: 'text', text: 'Echo: hello\nmore' }] }),
    error: summary.summariseError('connection refused\nstack…'),
    errorObject: summary.summariseError({ message: 'Unknown type "Foo"' }),
    relationships: summary.countPhrase(3, 'relationship types'),
    categories: summary.countPhrase(2, 'categories'),
    duration: [summary.formatDuration(12.4), summary.formatDuration(1530)],
    denied: [
      summary.deniedLabel('the call was not allowed: the user denied this call', { decidedBy: 'u1', me: 'u1' }),
      summary.deniedLabel('the user denied this call', { decidedBy: 'u2', me: 'u1' }),
      summary.deniedLabel('the call was not allowed: the user denied this call'),
      summary.deniedLabel('the call was not allowed: nobody approved the call within 60 s, so it was not run'),
      summary.deniedLabel('the call was not allowed: the answer was stopped before the call was approved'),
      summary.deniedLabel("the call was not allowed: the tool 'echo' of server 'everything' is set to ALWAYS_DENY (workspace policy)"),
      summary.deniedLabel("the tool 'echo' of server 'everything' is set to ALWAYS_DENY"),
      summary.deniedLabel("the call was not allowed: the tool 'echo' of server 'everything' is always denied for this user (a remembered decision)"),
      summary.deniedLabel('the call was not allowed: the approval rules could not be read: disk I/O error'),
      summary.deniedLabel(undefined),
    ],
  }));
  assert.equal(summaries.running, 'Calling kg · schema_version…');
  assert.equal(summaries.types, 'Found 12 object types');
  assert.equal(summaries.typeInfo, 'Found 6 object types');
  assert.equal(summaries.oneChange, 'Found 1 change');
  assert.equal(summaries.version, 'Version 57c52257693ae983 · 5 object types');
  assert.equal(summaries.total, 'Found 40 objects (2 shown)');
  assert.equal(summaries.text, 'Echo: hello');
  assert.equal(summaries.error, 'Failed: connection refused');
  assert.equal(summaries.errorObject, 'Failed: Unknown type "Foo"');
  assert.equal(summaries.relationships, '3 relationship types');
  assert.equal(summaries.categories, '2 categories');
  assert.deepEqual(summaries.duration, ['12 ms', '1.5 s']);
  // A refused call's badge says "denied" once, with who or what refused it.
  assert.deepEqual(summaries.denied, [
    '✕ Denied by you',
    '✕ Denied by another user',
    '✕ Denied at approval',
    '✕ Denied: approval timed out after 60 s',
    '✕ Not run: the answer was stopped before approval',
    '✕ Denied by the workspace policy (always deny)',
    '✕ Denied by policy (always deny)',
    '✕ Denied: an earlier "deny always" for this tool',
    '✕ Denied: the approval rules could not be read: disk I/O error',
    '✕ Denied',
  ]);
  for (const label of summaries.denied) assert.ok((label.match(/denied/gi) ?? []).length <= 1, label);
});

test('server status: the registry\'s states and sync states become green, yellow, red or grey with words', async () => {
  const shown = await inPage(['pages/servers/server-status'], ({ 'pages/servers/server-status': status }) => {
    const cases = {
      connected: { status: 'ACTIVE', sync_status: 'synced' },
      idleButSynced: { status: 'IDLE', sync_status: 'synced' },
      connecting: { status: 'INITIALIZING', sync_status: 'never_synced' },
      syncing: { status: 'IDLE', sync_status: 'syncing' },
      stale: { status: 'ACTIVE', sync_status: 'stale' },
      failed: { status: 'ERROR', sync_status: 'error' },
      syncFailed: { status: 'IDLE', sync_status: 'error' },
      needsAuth: { status: 'IDLE', sync_status: 'needs_auth' },
      disabled: { status: 'ACTIVE', sync_status: 'synced', is_active: false },
      closed: { status: 'CLOSED', sync_status: 'never_synced' },
    };
    return Object.fromEntries(Object.entries(cases).map(([name, server]) => {
      const { colour, label } = status.describeServerStatus(server);
      return [name, `${colour}: ${label}`];
    }));
  });
  assert.deepEqual(shown, {
    connected: 'green: Connected',
    idleButSynced: 'green: Ready — connects on first use',
    connecting: 'yellow: Connecting…',
    syncing: 'yellow: Syncing tools…',
    stale: 'yellow: Connected — tool list out of date',
    failed: 'red: Error',
    syncFailed: 'red: Tool sync failed',
    needsAuth: 'red: Needs credentials',
    disabled: 'grey: Disabled',
    closed: 'grey: Closed',
  });
});

test('server status: a slow server is yellow with its typical time in words and the figures in its tooltip', async () => {
  const shown = await inPage(['pages/servers/server-status'], ({ 'pages/servers/server-status': status }) => {
    const latency = { recent_p50_ms: 2400, recent_max_ms: 3120, samples: 12, last_start_ms: 850 };
    const cases = {
      slowCalls: { status: 'ACTIVE', sync_status: 'synced', slow: true, slow_reason: 'calls', latency },
      slowStart: { status: 'IDLE', sync_status: 'synced', slow: true, slow_reason: 'start', latency: { recent_p50_ms: 40, recent_max_ms: 90, samples: 3, last_start_ms: 6140 } },
      slowLongCalls: { status: 'ACTIVE', sync_status: 'synced', slow: true, slow_reason: 'calls', latency: { recent_p50_ms: 12400, recent_max_ms: 30000, samples: 1, last_start_ms: null } },
      fast: { status: 'ACTIVE', sync_status: 'synced', slow: false, slow_reason: null, latency: { recent_p50_ms: 35, recent_max_ms: 120, samples: 20, last_start_ms: 310 } },
      unmeasured: { status: 'IDLE', sync_status: 'synced', slow: false, latency: { recent_p50_ms: null, recent_max_ms: null, samples: 0, last_start_ms: null } },
      slowButFailing: { status: 'ERROR', sync_status: 'error', slow: true, slow_reason: 'calls', latency },
      slowButDisabled: { status: 'ACTIVE', sync_status: 'synced', is_active: false, slow: true, slow_reason: 'calls', latency },
      slowAndStale: { status: 'ACTIVE', sync_status: 'stale', slow: true, slow_reason: 'calls', latency },
    };
    const described = Object.fromEntries(Object.entries(cases).map(([name, server]) => {
      const { colour, label, detail } = status.describeServerStatus(server);
      return [name, { shown: `${colour}: ${label}`, detail }];
    }));
    const element = status.renderStatus(cases.slowCalls);
    document.body.append(element);
    const rendered = { text: element.innerText, title: element.title, dot: element.querySelector('.status-dot').dataset.status };
    element.remove();
    const plain = status.renderStatus(cases.unmeasured);
    return { described, rendered, plainHasTitle: plain.hasAttribute('title') };
  });
  assert.deepEqual(Object.fromEntries(Object.entries(shown.described).map(([name, { shown: words }]) => [name, words])), {
    slowCalls: 'yellow: Slow — recent calls take about 2.4 s',
    slowStart: 'yellow: Slow — starting took 6.1 s',
    slowLongCalls: 'yellow: Slow — recent calls take about 12 s',
    fast: 'green: Connected',
    unmeasured: 'green: Ready — connects on first use',
    slowButFailing: 'red: Error',
    slowButDisabled: 'grey: Disabled',
    slowAndStale: 'yellow: Slow — recent calls take about 2.4 s',
  });
  assert.equal(shown.described.slowCalls.detail, 'Last 12 requests: typically 2.4 s, slowest 3.1 s. Last start took 850 ms.');
  assert.equal(shown.described.slowLongCalls.detail, 'Last 1 request: typically 12 s, slowest 30 s.');
  assert.equal(shown.described.fast.detail, 'Last 20 requests: typically 35 ms, slowest 120 ms. Last start took 310 ms.');
  assert.equal(shown.described.unmeasured.detail, '');
  assert.deepEqual(shown.rendered, {
    text: 'Slow — recent calls take about 2.4 s',
    title: 'Last 12 requests: typically 2.4 s, slowest 3.1 s. Last start took 850 ms.',
    dot: 'yellow',
  });
  assert.equal(shown.plainHasTitle, false);
});

test('upstream errors: the plain explanation, then the client\'s own short message in view; long ones folded', async () => {
  const shown = await inPage(['upstream-errors'], ({ 'upstream-errors': errors }) => {
    const render = (...args) => {
      const element = errors.renderUpstreamError(...args);
      document.body.append(element);
      const result = { visible: element.innerText, folded: element.querySelector('details')?.textContent ?? null };
      element.remove();
      return result;
    };
    return {
      exited: render('init_failed', 'could not initialize a session with `node`: it exited with status 3; its last stderr line: no config file found', { prefix: 'Last error: ' }),
      long: render('protocol_error', 'x'.repeat(500)),
      unknownCode: render('something_new', 'the upstream said no'),
      noMessage: render('busy', ''),
    };
  });
  assert.equal(shown.exited.visible, 'Last error: The server did not complete the MCP handshake. Could not initialize a session with `node`: it exited with status 3; its last stderr line: no config file found.');
  assert.equal(shown.exited.folded, null);
  assert.match(shown.long.visible, /^The server sent something that is not valid MCP\.\s+Details$/);
  assert.match(shown.long.folded, /x{500}/);
  assert.equal(shown.unknownCode.visible, 'the upstream said no');
  assert.equal(shown.noMessage.visible, 'Too many calls are running on this server; try again in a moment.');
});

test('chat turn: a denied call\'s badge names who denied it, once', async () => {
  const badges = await inPage(['pages/chat/assistant-turn', 'session'], ({ 'pages/chat/assistant-turn': turnModule, session }) => {
    const before = session.getIdentity();
    session.setIdentity({ user_id: 'me', scopes: ['chat:use'] });
    try {
      const turn = new turnModule.AssistantTurn();
      document.body.append(turn.element);
      turn.startStreaming();
      const denied = (callId, toolCallId) => ({ type: 'mcp_tool', call_id: callId, tool_call_id: toolCallId, server: 'everything', tool: 'echo', status: 'error', state: 'denied', error: 'the call was not allowed: the user denied this call' });
      [
        // Decided by me; the decision arrives before the call's view exists.
        { type: 'approval_resolved', approval_id: 'ap1', tool_call_id: 'tc1', decision: 'denied', decided_by: 'me' },
        denied('a', 'tc1'),
        // Decided by someone else, after the denied event.
        denied('b', 'tc2'),
        { type: 'approval_resolved', approval_id: 'ap2', tool_call_id: 'tc2', decision: 'denied', decided_by: 'admin-1' },
        // Timed out.
        { type: 'mcp_tool', call_id: 'c', tool_call_id: 'tc3', server: 'everything', tool: 'echo', status: 'error', state: 'denied', error: 'the call was not allowed: nobody approved the call within 60 s, so it was not run' },
      ].forEach((event) => turn.applyEvent(event));
      const badge = (callId) => turn.element.querySelector(`[data-call-id="${callId}"] .badge`).textContent;
      const result = [badge('a'), badge('b'), badge('c')];
      turn.dispose();
      turn.element.remove();
      return result;
    } finally {
      session.setIdentity(before);
    }
  });
  assert.deepEqual(badges, ['✕ Denied by you', '✕ Denied by another user', '✕ Denied: approval timed out after 60 s']);
});

test('chat turn: stream events become tool activity, an approval card that posts the decision, a form, and Markdown', async () => {
  const outcome = await inPage(['pages/chat/assistant-turn'], async ({ 'pages/chat/assistant-turn': turnModule }) => {
    const realFetch = window.fetch;
    const posted = [];
    window.fetch = async (url, init) => {
      posted.push({ url, body: JSON.parse(init.body) });
      return new Response(JSON.stringify({ ok: true }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    try {
      const turn = new turnModule.AssistantTurn();
      document.body.append(turn.element);
      turn.startStreaming();
      const soon = new Date(Date.now() + 30000).toISOString();
      const events = [
        { type: 'meta', conversation_id: 'c1', model: 'offline' },
        { type: 'mcp_tool', call_id: 'a', server: 'kg', tool: 'schema_version', status: 'started', arguments: {} },
        { type: 'mcp_tool', call_id: 'b', server: 'kg', tool: 'type_info', status: 'started', arguments: {} },
      ];
      events.forEach((event) => turn.applyEvent(event));
      const running = turn.element.querySelector('[data-call-id="a"]').textContent;
      [
        { type: 'mcp_tool', call_id: 'a', server: 'kg', tool: 'schema_version', status: 'completed', result: { structuredContent: { version: 'abc123' } }, duration_ms: 4 },
        { type: 'mcp_tool', call_id: 'b', server: 'kg', tool: 'type_info', status: 'error', error: 'server kg is not reachable' },
        { type: 'approval_required', approval_id: 'ap1', server: 'files', tool: 'write_file', arguments: { path: '/x' }, description: 'Writes <b>files</b>', expires_at: soon, diff: { changes: [{ field: 'description', before: 'old', after: 'new' }], omitted: 0 } },
        { type: 'elicitation_required', elicitation_id: 'el1', server: 'everything', message: 'Your name?', requested_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, expires_at: soon },
        { type: 'token', token: '**Schema** ver' },
        { type: 'token', token: 'sion is `abc123`.' },
      ].forEach((event) => turn.applyEvent(event));
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      const card = turn.element.querySelector('.approval-card');
      const countdown = card.querySelector('.countdown').textContent;
      const diffText = card.querySelector('.definition-diff').textContent;
      [...card.querySelectorAll('button')].find((button) => button.textContent === 'Approve once').click();
      await new Promise((resolve) => setTimeout(resolve, 20));
      turn.applyEvent({ type: 'approval_resolved', approval_id: 'ap1', decision: 'approve' });
      const form = turn.element.querySelector('.elicitation-card form');
      form.querySelector('input[name=name]').value = 'Ada';
      form.requestSubmit();
      await new Promise((resolve) => setTimeout(resolve, 20));
      turn.applyEvent({ type: 'done' });
      const result = {
        running,
        completed: turn.element.querySelector('[data-call-id="a"]').textContent,
        failed: turn.element.querySelector('[data-call-id="b"]').textContent,
        countdown,
        diffText,
        descriptionHasBold: card.querySelectorAll('.description b').length,
        cardState: card.dataset.state,
        cardStatus: card.querySelector('[role=status]')?.textContent,
        elicitationState: turn.element.querySelector('.elicitation-card').dataset.state,
        answerHtml: turn.answer.innerHTML,
        busy: turn.element.hasAttribute('aria-busy'),
        posted,
      };
      turn.dispose();
      turn.element.remove();
      return result;
    } finally {
      window.fetch = realFetch;
    }
  });
  assert.match(outcome.running, /Calling kg · schema_version…/);
  assert.match(outcome.completed, /✓ Version abc123/);
  assert.match(outcome.completed, /4 ms/);
  assert.match(outcome.failed, /⚠ Failed: server kg is not reachable/);
  assert.match(outcome.countdown, /^0:(29|30)$/);
  assert.match(outcome.diffText, /- old/);
  assert.match(outcome.diffText, /\+ new/);
  assert.equal(outcome.descriptionHasBold, 0);
  assert.equal(outcome.cardState, 'resolved');
  assert.equal(outcome.cardStatus, 'Approved once');
  assert.equal(outcome.elicitationState, 'resolved');
  assert.equal(outcome.answerHtml, '<p><strong>Schema</strong> version is <code>abc123</code>.</p>');
  assert.equal(outcome.busy, false);
  assert.deepEqual(outcome.posted, [
    { url: '/chat/approvals/ap1', body: { decision: 'approve', remember: 'once' } },
    { url: '/chat/elicitations/el1', body: { action: 'accept', content: { name: 'Ada' } } },
  ]);
});

test('bud editor: the form\'s values become the body the bud API takes', async () => {
  const results = await inPage(['pages/buds/bud-form'], ({ 'pages/buds/bud-form': form }) => {
    const base = { name: ' Guide ', systemPrompt: 'Be brief.', provider: '', model: ' ', servers: null, toolChoice: 'auto', forcedTool: '', availableTools: '', disabledTools: '' };
    return {
      defaults: form.buildBudBody(base),
      chosen: form.buildBudBody({ ...base, provider: 'claude', model: 'claude-sonnet-4', servers: ['id-1'], toolChoice: 'function', forcedTool: ' kg.schema_version ', availableTools: 'kg.a\n\n kg.b ', disabledTools: 'kg.c' }),
      none: form.buildBudBody({ ...base, servers: [], toolChoice: 'none' }),
      missing: form.buildBudBody({ ...base, name: '  ', toolChoice: 'function' }).errors,
      readBack: [form.readToolChoice({ function: 'kg.x' }), form.readToolChoice('required'), form.readToolChoice(undefined)],
    };
  });
  assert.deepEqual(results.defaults, { body: { name: 'Guide', system_prompt: 'Be brief.', provider: null, model: null, mcp_config: {} }, errors: {} });
  assert.deepEqual(results.chosen.body, {
    name: 'Guide', system_prompt: 'Be brief.', provider: 'claude', model: 'claude-sonnet-4',
    mcp_config: { servers: ['id-1'], available_tools: ['kg.a', 'kg.b'], disabled_tools: ['kg.c'], tool_choice: { function: 'kg.schema_version' } },
  });
  assert.deepEqual(results.none.body.mcp_config, { servers: [], tool_choice: 'none' });
  assert.deepEqual(Object.keys(results.missing).sort(), ['forcedTool', 'name']);
  assert.deepEqual(results.readBack, [{ mode: 'function', tool: 'kg.x' }, { mode: 'required', tool: '' }, { mode: 'auto', tool: '' }]);
});

test('import dialog and user credentials: request bodies, and a report that says what happens to each entry', async () => {
  const results = await inPage(['pages/servers/import-dialog', 'pages/servers/user-credentials'], (modules) => {
    const importing = modules['pages/servers/import-dialog'];
    const credentials = modules['pages/servers/user-credentials'];
    const report = importing.renderReport({
      format: 'vscode', format_detected: true, dry_run: true, created: 1, changed: 0, skipped: 1,
      entries: [
        { name: 'github', action: 'create', transport: 'streamable_http', secrets: [], user_fields: ['GITHUB_TOKEN'], ignored_keys: [],
          references: [{ location: 'headers.Authorization', reference: '${input:github-token}', outcome: 'user_field', user_field: 'GITHUB_TOKEN' }] },
        { name: 'meta', action: 'skip', reason: 'url_not_allowed', message: 'url: http://169.254.169.254/ is refused', secrets: [], user_fields: [], references: [], ignored_keys: [] },
      ],
    });
    return {
      dryRun: importing.buildImportBody({ content: '{}', format: '', onConflict: 'skip', dryRun: true }),
      withFormat: importing.buildImportBody({ content: '{}', format: 'cursor', onConflict: 'replace', dryRun: false }),
      summary: report.querySelector('[role=status]').textContent,
      rows: [...report.querySelectorAll('tbody tr')].map((row) => [row.dataset.entry, row.dataset.action, row.textContent]),
      credentials: [credentials.buildCredentialsBody({ A: 'x', B: '' }), credentials.buildCredentialsBody({}, ['A'])],
    };
  });
  assert.deepEqual(results.dryRun, { content: '{}', dry_run: true, on_conflict: 'skip' });
  assert.deepEqual(results.withFormat, { content: '{}', dry_run: false, on_conflict: 'replace', format: 'cursor' });
  assert.equal(results.summary, 'VS Code file (detected): 1 to add, 0 to replace, 1 skipped. Nothing is stored yet.');
  assert.equal(results.rows[0][0], 'github');
  assert.match(results.rows[0][2], /will be added.*Each person fills in: GITHUB_TOKEN.*\$\{input:github-token\} in headers\.Authorization: becomes a field each person fills in/);
  assert.match(results.rows[1][2], /skipped.*The URL policy refuses this address: url: http:\/\/169\.254\.169\.254\/ is refused/);
  assert.deepEqual(results.credentials, [{ values: { A: 'x' } }, { values: { A: null } }]);
});

test('registry dialog and my tokens: the ways and inputs of a server.json, keyed as the API reads them; scopes offered', async () => {
  const results = await inPage(['pages/servers/registry-dialog', 'pages/tokens-page'], (modules) => {
    const registry = modules['pages/servers/registry-dialog'];
    const server = {
      name: 'io.github.acme/weather', version: '1.2.0',
      packages: [
        { registryType: 'npm', identifier: '@acme/weather', version: '1.2.0', transport: { type: 'stdio' },
          runtimeArguments: [{ type: 'named', name: '--quiet', value: 'true' }],
          packageArguments: [{ type: 'positional', valueHint: 'region', isRequired: true }, { type: 'named', name: '--units', choices: ['metric', 'imperial'] }],
          environmentVariables: [{ name: 'API_KEY', isRequired: true, isSecret: true, description: 'Key' }] },
        { registryType: 'nuget', identifier: 'Acme.Weather', transport: { type: 'stdio' } },
      ],
      remotes: [{ type: 'sse', url: 'https://{tenant}.example.com/sse', variables: { tenant: { isRequired: true } },
        headers: [{ name: 'Authorization', value: 'Bearer {token}', variables: { token: { isSecret: true, isRequired: true } } }] }],
    };
    const ways = registry.waysOf(server);
    return {
      ways: ways.map((way) => [way.kind, way.index, way.supported]),
      remoteInputs: registry.inputsOf(server, ways[0]).map((input) => [input.key, input.label, input.required, input.secret]),
      packageInputs: registry.inputsOf(server, ways[1]).map((input) => [input.key, input.required, input.secret, input.choices.length]),
      member: modules['pages/tokens-page'].grantableScopes(['servers:read', 'chat:use']),
      admin: modules['pages/tokens-page'].grantableScopes(['admin']).length,
    };
  });
  assert.deepEqual(results.ways, [['remote', 0, true], ['package', 0, true], ['package', 1, false]]);
  assert.deepEqual(results.remoteInputs, [['tenant', 'URL {tenant}', true, false], ['token', 'Header Authorization {token}', true, true]]);
  assert.deepEqual(results.packageInputs, [['region', true, false, 0], ['--units', false, false, 2], ['API_KEY', true, true, 0]]);
  assert.deepEqual(results.member, ['chat:use', 'servers:read']);
  assert.equal(results.admin, 8);
});

test('index.html: every stylesheet, script and module preload it names exists', async () => {
  const missing = await page.evaluate(async () => {
    const html = await (await fetch('/')).text();
    const documentFromServer = new DOMParser().parseFromString(html, 'text/html');
    const urls = [...documentFromServer.querySelectorAll('link[href], script[src]')].map((element) => element.getAttribute('href') ?? element.getAttribute('src'));
    const results = await Promise.all(urls.map(async (url) => ({ url, status: (await fetch(url)).status })));
    return { count: urls.length, missing: results.filter((result) => result.status !== 200) };
  });
  assert.ok(missing.count > 10);
  assert.deepEqual(missing.missing, []);
});

test('no page errors while running the units', () => {
  assert.deepEqual(pageErrors, []);
});
