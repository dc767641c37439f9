// apps: what the MCP Apps browser tests share — the example and fixture app servers, registered
// as stdio servers and synced, a tool's policy, a signed-in page whose chat loads apps, and the
// frame of the app rendered under a turn.

import assert from 'node:assert/strict';
import path from 'node:path';
import { repositoryRoot } from './chromium.js';
import { apiCall, serveWebFromDiskWhenAsked } from './switchboard.js';

/** The official example app server `@modelcontextprotocol/server-basic-vanillajs` (`--stdio`). */
export const basicAppScript = path.join(repositoryRoot, 'interop', 'apps', 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');
/** Our palette fixture, built on the official SDK's `App`. */
export const paletteAppScript = path.join(repositoryRoot, 'tests', 'apps', 'palette-app-server.mjs');

/** Registers a Node app server as a stdio server named `name`, syncs it; resolves to its id. */
export async function registerApp(switchboard, name, args) {
  const server = await apiCall(switchboard, 'POST', '/api/mcp/servers', { name, transport: 'stdio', command: process.execPath, args });
  const synced = await apiCall(switchboard, 'POST', `/api/mcp/servers/${server.id}/sync`);
  assert.ok(synced.tool_count > 0, `${name} lists its tools`);
  return server.id;
}

/** Sets the workspace policy of a server's tool. */
export async function setToolPolicy(switchboard, serverId, tool, policy) {
  await apiCall(switchboard, 'PUT', `/api/mcp/servers/${serverId}/tools/${encodeURIComponent(tool)}/policy`, { policy });
}

/**
 * A browser context signed in with the instance's token (in the top window only, never in an
 * app's frame) and a page of it whose errors go to `pageErrors`; `prepare(context)` runs before
 * the page opens (e.g. to answer outside links).
 */
export async function signedInAppsPage(browser, switchboard, pageErrors, prepare = async () => {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await serveWebFromDiskWhenAsked(context);
  await prepare(context);
  await context.addInitScript((token) => {
    if (window === window.top) sessionStorage.setItem('switchboard.token', token);
  }, switchboard.token);
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  return { context, page };
}

/** The frame of the app shown under `turn`, once it is there. */
export async function appFrame(turn) {
  const iframe = turn.locator('.mcp-app iframe');
  await iframe.waitFor({ timeout: 30000 });
  return (await iframe.elementHandle()).contentFrame();
}

/**
 * A `prepare` for `signedInAppsPage`: every app frame keeps what its window is sent, in order
 * (`window.__hostMessages`, recorded before the app's own scripts run), and the UI's page notes
 * when each tool call's view first shows it completed (`window.__toolCallCompletedAt`, by the
 * view's `data-call-id`, in ms since the epoch like `performance.timeOrigin + performance.now()`).
 */
export async function recordAppMessages(context) {
  await context.addInitScript(() => {
    if (window !== window.top) {
      window.__hostMessages = [];
      window.addEventListener('message', (event) => window.__hostMessages.push(event.data));
      return;
    }
    window.__toolCallCompletedAt = {};
    const note = () => {
      for (const element of document.querySelectorAll('.tool-call[data-status=completed]')) {
        const id = element.dataset.callId;
        if (!(id in window.__toolCallCompletedAt)) window.__toolCallCompletedAt[id] = performance.timeOrigin + performance.now();
      }
    };
    new MutationObserver(note).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  });
}

/** When the page first showed `toolCall` (a `.tool-call` locator) completed; needs `recordAppMessages`. */
export async function toolCallCompletedAt(page, toolCall) {
  const id = await toolCall.getAttribute('data-call-id');
  return page.evaluate((key) => window.__toolCallCompletedAt?.[key] ?? null, id);
}
