import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (scripts/services.sh installs it); never a browser a tool downloaded. */
export const CHROMIUM = process.env.ACKCRAWL_CHROMIUM ?? '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * Chromium for the dashboard tests: headless, and cut off from everything but loopback (every
 * other address goes to a proxy that is not there), so no test can reach a real website.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--no-first-run',
      '--no-pings',
    ],
    proxy: { server: 'http://127.0.0.1:9', bypass: '127.0.0.1,localhost,[::1]' },
  });
}

/** Where a browser test keeps what it saw (screenshots): test-output/<name>, or ACKCRAWL_TEST_OUTPUT/<name>. */
export function testOutputDir(name: string): string {
  const dir = resolve(process.env.ACKCRAWL_TEST_OUTPUT ?? 'test-output', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught errors and console errors the page had so far. */
  errors: string[];
}

/** A page in a context of its own, with every uncaught error and console error collected. */
export async function openPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
    ...(options.viewport && options.viewport.width < 600 ? { isMobile: true, hasTouch: true } : {}),
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every API answer of 4xx/5xx as a failed load; the page shows those itself
    // (a job without a schedule is a 404, a bad job a 400). A missing script or style is not that.
    const from = message.location().url;
    if (
      /Failed to load resource/.test(message.text()) &&
      new URL(from, 'http://x/').pathname.startsWith('/api/v1/')
    )
      return;
    errors.push(`console: ${message.text()} (${from})`);
  });
  return { page, context, errors };
}

/** A full-page PNG at `<dir>/<name>.png`. */
export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
