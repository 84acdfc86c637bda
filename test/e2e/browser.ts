import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium, as DEVELOPERS.md and .ci/run install it; the e2e suite skips (saying why) without it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const noChromiumReason = `e2e skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A browser context that can only reach loopback: any request elsewhere is aborted and recorded, so a page
 * that tried to load something from a CDN fails the test instead of sending a packet off this machine.
 */
export async function loopbackOnlyContext(
  browser: Browser,
): Promise<{ context: BrowserContext; refused: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const refused: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    const local = url.protocol === 'blob:' || url.protocol === 'data:' || LOOPBACK_HOSTS.has(url.hostname);
    if (local) return route.continue();
    refused.push(url.href);
    return route.abort('blockedbyclient');
  });
  return { context, refused };
}
