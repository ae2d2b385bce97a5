// A real Chromium for tests that must see what a browser enforces (CORS, cookie rules, redirects):
// Debian's `chromium` driven by playwright-core. `.ci/run` installs the package; a machine without
// it reports the browser tests as skipped rather than failing the whole run.
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

const EXECUTABLE = process.env.PROUDAUTH_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or null when they can. */
export const NO_BROWSER = existsSync(EXECUTABLE)
  ? null
  : `no Chromium at ${EXECUTABLE} (install Debian's chromium package, as .ci/run does)`;

// Test machines have no outside network: without these switches Chromium keeps trying to reach
// Google's services at start-up and in the background.
const QUIET_NETWORK = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--metrics-recording-only',
];

export interface TestBrowser {
  browser: Browser;
  /** A fresh profile: its own cookies and storage. */
  newContext(): Promise<BrowserContext>;
}

/**
 * Launches headless Chromium for one test; closed when the test ends. Playwright gives each launch
 * a new empty profile of its own and removes it on close.
 */
export async function launchBrowser(t: TestContext): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: EXECUTABLE, headless: true, args: QUIET_NETWORK });
  t.after(() => browser.close());
  return { browser, newContext: () => browser.newContext() };
}
