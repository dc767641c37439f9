#!/usr/bin/env node
// A well-behaved MCP App built on the official SDK's `App` (`@modelcontextprotocol/ext-apps`, as
// installed by interop/install.sh; its bundle is inlined into the page at start, nothing of it is
// committed), for the browser tests of what an app may ask its host (issue 12): open a link,
// send a message as the person, update the model's context, change its display mode, read a
// resource of its own server (and try one of another server), list its server's resources, have
// files downloaded, log, ask to sample (refused) and to be closed, follow the host's theme and
// styles (with the SDK's `applyHostStyleVariables`), and use the browser permissions
// its resource declares (`_meta.ui.permissions`: camera and clipboard write) if the person
// allows them. An MCP server over stdio in plain JSON-RPC (no server SDK), with one tool,
// `palette`, and its `ui://palette/app.html`; a text resource `palette://colours`, a template
// `palette://colours/{name}` and a prompt `describe-colour`.
//
// The page has one button per request (#<name>) and writes each outcome into #out-<name>, so a
// test drives it step by step through the browser and answers the host's dialogs in between.

import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkBundle = path.join(here, '..', '..', 'interop', 'apps', 'node_modules', '@modelcontextprotocol', 'ext-apps', 'dist', 'src', 'app-with-deps.js');
const RESOURCE_URI = 'ui://palette/app.html';
const COLOURS_URI = 'palette://colours';
const MIME_TYPE = 'text/html;profile=mcp-app';
const DECLARED_PERMISSIONS = { camera: {}, clipboardWrite: {} };

/** The SDK's ES module as a classic script that leaves its exports on `globalThis.McpApps`. */
function sdkAsScript() {
  const source = readFileSync(sdkBundle, 'utf8');
  const exportAt = source.lastIndexOf('export{');
  const names = source.slice(exportAt + 'export{'.length, source.lastIndexOf('}')).split(',').map((entry) => {
    const [local, exported] = entry.trim().split(/\s+as\s+/);
    return `${JSON.stringify(exported ?? local)}: ${local}`;
  });
  return `${source.slice(0, exportAt)}\nglobalThis.McpApps = { ${names.join(', ')} };`.replaceAll('</script', '<\\/script');
}

const APP_SCRIPT = `
const { App, applyHostStyleVariables } = globalThis.McpApps;
const app = new App({ name: 'palette', version: '1.0.0' }, { availableDisplayModes: ['inline', 'fullscreen'] });
// A request the SDK's App does not send (or refuses to send itself), straight to the host.
const raw = (method, params) => new Promise((resolve) => {
  const id = 'raw-' + Math.random().toString(36).slice(2);
  const listener = (event) => {
    if (event.source !== window.parent || event.data?.id !== id) return;
    window.removeEventListener('message', listener);
    resolve(event.data);
  };
  window.addEventListener('message', listener);
  window.parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
});
const out = (name, value) => { document.getElementById('out-' + name).textContent = typeof value === 'string' ? value : JSON.stringify(value); };
const run = (name, action) => document.getElementById(name).addEventListener('click', async () => {
  out(name, 'waiting');
  try { out(name, await action()); } catch (error) { out(name, 'error: ' + (error && error.message)); }
});
app.ontoolresult = (result) => out('result', result.structuredContent || null);
// The input as the model writes it, each version in order, then the whole input.
const partials = [];
app.ontoolinputpartial = (params) => { partials.push(params.arguments); out('partials', partials); };
app.ontoolinput = (params) => out('input', params.arguments);
// Host styles: applied with the SDK's helper; #out-styles shows the theme and what the page's
// root then resolves two of the spec's variables to.
const showStyles = (context) => {
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
  const root = getComputedStyle(document.documentElement);
  out('styles', { theme: context.theme, background: root.getPropertyValue('--color-background-primary').trim(), text: root.getPropertyValue('--color-text-primary').trim(), count: Object.keys(context.styles?.variables ?? {}).length });
};
app.onhostcontextchanged = (context) => {
  if (context.displayMode) out('context-mode', context.displayMode);
  if (context.theme || context.styles) showStyles({ ...app.getHostContext(), ...context });
};
app.onteardown = async () => {
  await app.sendLog({ level: 'info', data: 'palette torn down' });
  return {};
};
run('open-link', () => app.openLink({ url: 'https://example.com/teal' }));
run('open-bad-link', () => app.openLink({ url: 'javascript:alert(1)' }));
run('send-message', () => app.sendMessage({ role: 'user', content: [{ type: 'text', text: 'Tell me about the colour teal' }] }));
run('update-context', () => app.updateModelContext({ content: [{ type: 'text', text: 'The person picked teal.' }], structuredContent: { colour: 'teal' } }));
run('fullscreen', async () => (await app.requestDisplayMode({ mode: 'fullscreen' })).mode);
run('inline', async () => (await app.requestDisplayMode({ mode: 'inline' })).mode);
run('pip', async () => (await app.requestDisplayMode({ mode: 'pip' })).mode);
run('read-own', async () => (await app.readServerResource({ uri: '${COLOURS_URI}' })).contents[0].text);
run('read-other', async () => JSON.stringify(await app.readServerResource({ uri: 'ui://get-time/mcp-app.html' })).slice(0, 80));
run('download-embedded', async () => app.downloadFile({ contents: [{ type: 'resource', resource: { uri: 'file:///exports/palette.csv', mimeType: 'text/csv', text: 'colour\\nteal\\ncoral\\n' } }] }));
run('download-link', async () => app.downloadFile({ contents: [{ type: 'resource_link', uri: '${COLOURS_URI}', name: 'colours.txt', mimeType: 'text/plain' }] }));
run('list-resources', async () => (await app.listServerResources()).resources.map((resource) => resource.uri).join(' '));
run('sample', async () => JSON.stringify((await raw('sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 })).error));
run('list-templates', async () => JSON.stringify((await raw('resources/templates/list', {})).result));
run('list-prompts', async () => JSON.stringify((await raw('prompts/list', {})).result));
run('log', async () => { await app.sendLog({ level: 'warning', data: 'palette says hello' }); return 'sent'; });
run('close', async () => { app.requestTeardown(); return 'asked'; });
app.connect().then(() => {
  const policy = document.permissionsPolicy || document.featurePolicy;
  out('init', {
    host: app.getHostVersion()?.name,
    display_mode: app.getHostContext()?.displayMode,
    available: app.getHostContext()?.availableDisplayModes,
    capabilities: app.getHostCapabilities(),
    theme: app.getHostContext()?.theme,
    allows: Object.fromEntries(['camera', 'microphone', 'clipboard-write', 'geolocation'].map((feature) => [feature, policy ? policy.allowsFeature(feature) : null])),
  });
  showStyles(app.getHostContext() ?? {});
  document.body.dataset.ready = 'true';
});
`;

function appHtml() {
  const buttons = ['open-link', 'open-bad-link', 'send-message', 'update-context', 'fullscreen', 'inline', 'pip', 'read-own', 'read-other', 'download-embedded', 'download-link', 'list-resources', 'list-templates', 'list-prompts', 'sample', 'log', 'close'];
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Palette</title></head>
<body><h1>Palette</h1>
<pre id="out-init"></pre><pre id="out-partials"></pre><pre id="out-input"></pre><pre id="out-result"></pre><pre id="out-context-mode"></pre><pre id="out-styles"></pre>
${buttons.map((name) => `<p><button id="${name}">${name}</button> <code id="out-${name}"></code></p>`).join('\n')}
<script>${sdkAsScript()}</script>
<script>${APP_SCRIPT}</script>
</body></html>`;
}

const TOOLS = [{
  name: 'palette',
  title: 'Colour palette',
  description: 'Shows the colour palette app, where the person picks a colour.',
  inputSchema: { type: 'object', properties: {} },
  _meta: { ui: { resourceUri: RESOURCE_URI } },
}];

function answer(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);
}

function fail(id, code, message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
}

function handle({ id, method, params }) {
  switch (method) {
    case 'initialize':
      return answer(id, { protocolVersion: '2025-06-18', capabilities: { tools: {}, resources: {}, prompts: {} }, serverInfo: { name: 'palette-app', version: '1.0.0' } });
    case 'ping':
      return answer(id, {});
    case 'tools/list':
      return answer(id, { tools: TOOLS });
    case 'tools/call':
      if (params?.name === 'palette') return answer(id, { content: [{ type: 'text', text: 'palette shown' }], structuredContent: { colours: ['teal', 'coral'] } });
      return fail(id, -32602, `unknown tool ${params?.name}`);
    case 'resources/list':
      return answer(id, { resources: [{ uri: RESOURCE_URI, name: 'palette', mimeType: MIME_TYPE }, { uri: COLOURS_URI, name: 'colours', mimeType: 'text/plain' }] });
    case 'resources/templates/list':
      return answer(id, { resourceTemplates: [{ uriTemplate: 'palette://colours/{name}', name: 'colour', mimeType: 'text/plain' }] });
    case 'prompts/list':
      return answer(id, { prompts: [{ name: 'describe-colour', description: 'Describes a colour.', arguments: [{ name: 'colour', required: true }] }] });
    case 'resources/read':
      if (params?.uri === RESOURCE_URI) {
        return answer(id, { contents: [{ uri: RESOURCE_URI, mimeType: MIME_TYPE, text: appHtml(), _meta: { ui: { permissions: DECLARED_PERMISSIONS } } }] });
      }
      if (params?.uri === COLOURS_URI) return answer(id, { contents: [{ uri: COLOURS_URI, mimeType: 'text/plain', text: 'teal, coral' }] });
      return fail(id, -32002, `no such resource on the palette server: ${params?.uri}`);
    default:
      return fail(id, -32601, `method not found: ${method}`);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined || message.id === null) return;
  handle(message);
});
