// switchboard: starts the real `switchboard serve` binary for a browser test — a fresh data
// directory (SQLite), a known owner token, an ephemeral loopback port read from the ready line —
// and stops it (SIGTERM, then SIGKILL) afterwards. The binary is the one `cargo build` produced
// (target/debug/switchboard, or $SWITCHBOARD_BIN); a missing binary fails with a clear message.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { launchChromium, repositoryRoot, watchPageErrors } from './chromium.js';

const READY_LINE = /ready at (http:\/\/[^\s]+)/;

/** Path of the switchboard binary under test. */
export function switchboardBinary() {
  const binary = process.env.SWITCHBOARD_BIN ?? path.join(repositoryRoot, 'target', 'debug', 'switchboard');
  if (!existsSync(binary)) {
    throw new Error(`switchboard binary not found at ${binary}: run \`cargo build -p switchboard\` first (the README's test command does).`);
  }
  return binary;
}

/**
 * Starts Switchboard on `bind` (an ephemeral loopback port unless a test needs to know it
 * beforehand, e.g. for `SWITCHBOARD_PUBLIC_URL`); resolves to `{origin, token, dataDirectory,
 * logs, stop}`. `dataDirectory` and `token` start it again on an earlier start's store. With
 * SWITCHBOARD_TEST_ORIGIN and SWITCHBOARD_TEST_TOKEN set, uses that running instance instead
 * (for trying the UI tests against a development server; CI always starts its own).
 */
export async function startSwitchboard({ env = {}, bind = '127.0.0.1:0', timeoutMs = 60000, dataDirectory: kept = null, token: knownToken = null } = {}) {
  if (process.env.SWITCHBOARD_TEST_ORIGIN && process.env.SWITCHBOARD_TEST_TOKEN) {
    return { origin: process.env.SWITCHBOARD_TEST_ORIGIN, token: process.env.SWITCHBOARD_TEST_TOKEN, dataDirectory: null, logs: [], stop: async () => {} };
  }
  // A given data directory (a restart: with the token its first start had) is the caller's to remove.
  const dataDirectory = kept ?? mkdtempSync(path.join(os.tmpdir(), 'switchboard-browser-'));
  const token = knownToken ?? `sb_test_${randomBytes(18).toString('hex')}`;
  // A pinned `bind` would put the apps listener on the next port, which may be taken on a busy
  // machine; any free port serves the tests (the apps origin is read from the instance).
  const appsBind = { SWITCHBOARD_SERVER_APPS_BIND: `${bind.slice(0, bind.lastIndexOf(':'))}:0` };
  const child = spawn(switchboardBinary(), ['serve', '--bind', bind, '--data-dir', dataDirectory], {
    cwd: dataDirectory,
    env: { ...process.env, SWITCHBOARD_ADMIN_TOKEN: token, RUST_LOG: process.env.RUST_LOG ?? 'warn', ...appsBind, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = [];
  const remember = (chunk) => {
    logs.push(chunk.toString());
    if (logs.length > 2000) logs.splice(0, logs.length - 2000);
  };
  child.stderr.on('data', remember);
  const origin = await new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`switchboard did not become ready within ${timeoutMs} ms:\n${logs.join('')}`)), timeoutMs);
    child.stdout.on('data', (chunk) => {
      remember(chunk);
      stdout += chunk.toString();
      const match = stdout.match(READY_LINE);
      if (match) {
        clearTimeout(timer);
        resolve(match[1].replace(/\/$/, ''));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`switchboard exited early (code ${code}, signal ${signal}):\n${logs.join('')}`));
    });
  });
  child.removeAllListeners('exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), 35000);
    await exited;
    clearTimeout(killTimer);
    if (!kept) rmSync(dataDirectory, { recursive: true, force: true });
  };
  return { origin, token, dataDirectory, logs, stop };
}

/** A JSON API call with the owner token, for test set-up and checks. */
export async function apiCall(instance, method, apiPath, body) {
  const response = await fetch(`${instance.origin}${apiPath}`, {
    method,
    headers: { Authorization: `Bearer ${instance.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!response.ok) throw new Error(`${method} ${apiPath} → ${response.status}: ${text}`);
  return parsed;
}

/** A page in a new browser context, signed in with `token` (and the UI from disk when asked). */
export async function newSignedInPage(browser, token, { viewport = { width: 1280, height: 900 } } = {}) {
  const context = await browser.newContext({ viewport });
  await serveWebFromDiskWhenAsked(context);
  await context.addInitScript((value) => sessionStorage.setItem('switchboard.token', value), token);
  return context.newPage();
}

/**
 * What most page tests start with: Switchboard (`options` as for `startSwitchboard`), Chromium
 * and a signed-in page whose script errors are collected. Resolves to `{switchboard, browser,
 * page, pageErrors, close}`.
 */
export async function startBrowserSession(options = {}) {
  const switchboard = await startSwitchboard(options);
  let browser;
  try {
    browser = await launchChromium();
    const page = await newSignedInPage(browser, switchboard.token);
    const pageErrors = watchPageErrors(page);
    const close = async () => {
      await browser.close();
      await switchboard.stop();
    };
    return { switchboard, browser, page, pageErrors, close };
  } catch (error) {
    await browser?.close();
    await switchboard.stop();
    throw error;
  }
}

const ASSET_PATH = /^\/assets\/[^/]+\/(.+)$/;
const ASSET_TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json' };

/**
 * With SWITCHBOARD_TEST_WEB_FROM_DISK=1, `context` gets the UI's asset files from web/ in this
 * checkout instead of the binary's embedded copy, so UI changes can be tried without rebuilding
 * (like SWITCHBOARD_TEST_ORIGIN, a development aid: CI never sets it and tests the binary's own).
 */
export async function serveWebFromDiskWhenAsked(context) {
  if (process.env.SWITCHBOARD_TEST_WEB_FROM_DISK !== '1') return;
  await context.route((url) => ASSET_PATH.test(url.pathname), async (route) => {
    const relative = new URL(route.request().url()).pathname.match(ASSET_PATH)[1];
    try {
      const body = await readFile(path.join(repositoryRoot, 'web', 'assets', relative));
      await route.fulfill({ status: 200, body, contentType: ASSET_TYPES[path.extname(relative)] ?? 'application/octet-stream' });
    } catch {
      await route.continue();
    }
  });
}
