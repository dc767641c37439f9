// fake-openai-server: a small OpenAI-compatible Chat Completions server for browser tests. Each
// API prefix (`/{prefix}/v1`) stands for one provider, so several named providers can point at
// one process. `POST …/chat/completions` with `stream: true` answers the way OpenAI documents it:
// `data:` chunks (role, the text in pieces, `finish_reason: stop`), then — when the request asked
// for `stream_options.include_usage` — the usage-only chunk with `prompt_tokens_details
// .cached_tokens`, then `data: [DONE]`. The answer names the prefix and model it came from, so a
// test sees who answered. `GET …/models` lists the models given for the prefix. Every request is
// recorded. `enqueueToolCall` makes the next answer a tool call instead, its arguments streamed
// slowly in pieces (a model writing a long input).

import http from 'node:http';

/** Tokens each answer reports (fixed, so the UI's numbers can be checked exactly). */
export const FAKE_USAGE = { prompt_tokens: 1234, completion_tokens: 56, cached_tokens: 1000 };

/**
 * Starts the fake on 127.0.0.1 and an ephemeral port. `models` maps a prefix to the model ids
 * its `GET /models` lists. Resolves to `{origin, baseUrl(prefix), requests, close}`.
 */
export async function startFakeOpenAi({ models = {} } = {}) {
  const requests = [];
  const toolCalls = [];
  const server = http.createServer(async (request, response) => {
    const match = new URL(request.url, 'http://localhost').pathname.match(/^\/([a-z0-9-]+)\/v1\/(chat\/completions|models)$/);
    if (!match) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
      return;
    }
    const [, prefix, endpoint] = match;
    if (endpoint === 'models') {
      response.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: (models[prefix] ?? []).map((id) => ({ id, object: 'model', owned_by: prefix })) }));
      return;
    }
    const body = JSON.parse(await readBody(request));
    requests.push({ prefix, path: request.url, body, headers: request.headers });
    const toolCall = toolCalls.shift();
    if (toolCall) streamToolCall(response, { body, ...toolCall });
    else streamAnswer(response, { prefix, body });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    baseUrl: (prefix) => `${origin}/${prefix}/v1`,
    requests,
    /** The next answer calls `name` with `args`, streamed in `pieces` with `pauseMs` before each. */
    enqueueToolCall: ({ name, args, pieces = 8, pauseMs = 250 }) => toolCalls.push({ name, args, pieces, pauseMs }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function streamToolCall(response, { body, name, args, pieces, pauseMs }) {
  const id = `chatcmpl-${requestCounter += 1}`;
  const chunk = (delta, finishReason = null) => ({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  const text = JSON.stringify(args);
  const size = Math.ceil(text.length / pieces);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event) => response.write(`data: ${JSON.stringify(event)}\n\n`);
  send(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${requestCounter}`, type: 'function', function: { name, arguments: '' } }] }));
  for (let at = 0; at < text.length; at += size) {
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    send(chunk({ tool_calls: [{ index: 0, function: { arguments: text.slice(at, at + size) } }] }));
  }
  send(chunk({}, 'tool_calls'));
  response.end('data: [DONE]\n\n');
}

function streamAnswer(response, { prefix, body }) {
  const id = `chatcmpl-${requestCounter += 1}`;
  const chunk = (choices, extra = {}) => ({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model, choices, ...extra });
  const text = `Answered by ${prefix} with ${body.model}.`;
  const events = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  for (const piece of text.match(/.{1,8}/g)) events.push(chunk([{ index: 0, delta: { content: piece }, finish_reason: null }]));
  events.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  if (body.stream_options?.include_usage) {
    events.push(chunk([], {
      usage: {
        prompt_tokens: FAKE_USAGE.prompt_tokens,
        completion_tokens: FAKE_USAGE.completion_tokens,
        total_tokens: FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens,
        prompt_tokens_details: { cached_tokens: FAKE_USAGE.cached_tokens },
      },
    }));
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) response.write(`data: ${JSON.stringify(event)}\n\n`);
  response.end('data: [DONE]\n\n');
}

let requestCounter = 0;

function readBody(request) {
  return new Promise((resolve, reject) => {
    const parts = [];
    request.on('data', (part) => parts.push(part));
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}
