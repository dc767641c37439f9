// Browser test of the servers page's "From registry…" dialog against the real binary: a local
// MCP registry (a plain node HTTP server speaking the official registry API, `/v0.1/servers`
// and `…/versions/{version}`, with `server.json` documents shaped as the official schema
// writes them) configured with SWITCHBOARD_REGISTRY_URL. A person searches, opens a published
// remote (Switchboard's own kg endpoint, its bearer token a secret variable), fills the token,
// previews, adds it, and the new server connects. A package shows the command it would run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { saveScreenshot } from './support/chromium.js';
import { apiCall, startBrowserSession } from './support/switchboard.js';

let session;
let registry;
let documents = [];

function entry(document) {
  return { server: document, _meta: { 'io.modelcontextprotocol.registry/official': { status: 'active', isLatest: true, publishedAt: '2026-11-01T10:00:00Z' } } };
}

function startRegistry() {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://registry.test');
    const send = (status, body) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/v0.1/servers') {
      const search = url.searchParams.get('search') ?? '';
      const servers = documents.filter((document) => document.name.includes(search)).map(entry);
      return send(200, { servers, metadata: { count: servers.length } });
    }
    const detail = url.pathname.match(/^\/v0\.1\/servers\/([^/]+)\/versions\/([^/]+)$/);
    const found = detail && documents.find((document) => document.name === decodeURIComponent(detail[1]));
    return found ? send(200, entry(found)) : send(404, { error: 'Server not found' });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  registry = await startRegistry();
  session = await startBrowserSession({ env: { SWITCHBOARD_REGISTRY_URL: `http://127.0.0.1:${registry.address().port}/v0.1` } });
  documents = [
    {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
      name: 'io.github.switchboard-tests/knowledge-graph',
      title: 'Knowledge graph',
      description: 'Schema and objects of a Switchboard knowledge graph',
      version: '1.0.0',
      remotes: [{
        type: 'streamable-http',
        url: `${session.switchboard.origin}/mcp`,
        headers: [{ name: 'Authorization', isRequired: true, isSecret: true, value: 'Bearer {token}',
          variables: { token: { description: 'A Switchboard token with schema:read', isRequired: true, isSecret: true } } }],
      }],
    },
    {
      name: 'io.github.acme/weather',
      description: 'Weather forecasts',
      version: '1.2.0',
      packages: [{ registryType: 'npm', identifier: '@acme/weather-mcp', version: '1.2.0', transport: { type: 'stdio' },
        environmentVariables: [{ name: 'WEATHER_API_KEY', description: 'Weather API key', isRequired: true, isSecret: true }] }],
    },
  ];
});

after(async () => {
  await session?.close();
  registry?.close();
});

test('registry: a published remote is found, its token filled, previewed, added, and it connects', async () => {
  const { page, switchboard, pageErrors } = session;
  const token = (await apiCall(switchboard, 'POST', '/api/tokens', { name: 'registry kg', scopes: ['schema:read', 'data:read'] })).plaintext;
  await page.goto(`${switchboard.origin}/#/servers`);
  await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
  await page.getByRole('button', { name: 'From registry…' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('[data-server="io.github.acme/weather"]').waitFor();
  await dialog.getByLabel('Search the registry').fill('knowledge');
  await dialog.getByRole('button', { name: 'Search', exact: true }).click();
  await dialog.locator('[data-server="io.github.acme/weather"]').waitFor({ state: 'detached' });
  await dialog.locator('[data-server="io.github.switchboard-tests/knowledge-graph"] button').click();
  const details = dialog.getByRole('region', { name: 'Details of io.github.switchboard-tests/knowledge-graph' });
  await details.getByLabel('How to reach it').waitFor();
  const tokenInput = details.getByLabel('Header Authorization {token}');
  assert.equal(await tokenInput.getAttribute('type'), 'password', 'a secret input is a password field');
  await tokenInput.fill(token);
  await details.getByLabel('Name in Switchboard').fill('kg-registry');
  await details.getByRole('button', { name: 'Preview' }).click();
  await details.getByRole('status').filter({ hasText: 'Would add “kg-registry” (streamable_http)' }).waitFor();
  assert.match(await details.getByRole('status').textContent(), /Stored encrypted: headers\.Authorization/);
  const before = (await apiCall(switchboard, 'GET', '/api/mcp/servers')).servers;
  assert.equal(before.some((server) => server.name === 'kg-registry'), false, 'a preview stores nothing');
  await saveScreenshot(page, '40-registry-preview');
  await details.getByRole('button', { name: 'Add server' }).click();
  await dialog.waitFor({ state: 'detached' });
  const card = page.locator('[data-server-name="kg-registry"]');
  await card.getByRole('button', { name: 'Test connection' }).click();
  await card.locator('.status-dot[data-status="green"]').waitFor({ timeout: 30000 });
  assert.deepEqual(pageErrors, []);
});

test('registry: a package shows the command it would run, and each person’s own key when none is given', async () => {
  const { page, switchboard } = session;
  await page.goto(`${switchboard.origin}/#/servers`);
  await page.reload();
  await page.getByRole('button', { name: 'From registry…' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('[data-server="io.github.acme/weather"] button').click();
  const details = dialog.getByRole('region', { name: 'Details of io.github.acme/weather' });
  await details.getByRole('button', { name: 'Preview' }).click();
  const status = details.getByRole('status');
  await status.filter({ hasText: 'npx -y @acme/weather-mcp@1.2.0' }).waitFor();
  assert.match(await status.textContent(), /Each person fills in: WEATHER_API_KEY/);
});
