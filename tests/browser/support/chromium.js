// chromium: launches Debian's Chromium (never a downloaded browser) headless through
// playwright-core, with the flags this machine's closed network needs, and saves screenshots to
// the folder the README names (artifacts/screenshots/, or $SCREENSHOT_DIR).

import { chromium } from 'playwright-core';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const screenshotDirectory = process.env.SCREENSHOT_DIR ?? path.join(repositoryRoot, 'artifacts', 'screenshots');

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--disable-dev-shm-usage',
];

/** Launches headless Chromium (plus `args`); fails with a clear message when it is not installed. */
export async function launchChromium({ args = [] } = {}) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install Debian's package (apt-get install chromium) — .ci/run does this.`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_FLAGS, ...args] });
}

/** Saves a full-page screenshot as <name>.png in the screenshot folder; returns its path. */
export async function saveScreenshot(page, name) {
  mkdirSync(screenshotDirectory, { recursive: true });
  const file = path.join(screenshotDirectory, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Collects console errors and uncaught page errors so a test can assert there were none. */
export function watchPageErrors(page) {
  const errors = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return errors;
}
