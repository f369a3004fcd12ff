import { chromium, type Browser } from 'playwright-core';
import type { Logger } from '../../../shared/logger.js';

/**
 * Flags for Debian's Chromium as a crawler drives it: headless, no sandbox (crawler processes may
 * run as root in containers), no GPU, no background traffic of its own; images are not loaded (a
 * crawler records the DOM, not pixels), and WebRTC may not send UDP around the guard proxy.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--blink-settings=imagesEnabled=false',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export type LaunchBrowser = () => Promise<Browser>;

/** Launches the Chromium at `executablePath` (never a browser a tool downloaded). */
export function chromiumLauncher(executablePath: string): LaunchBrowser {
  return () =>
    chromium.launch({
      executablePath,
      args: CHROMIUM_ARGS,
      // The crawler owns shutdown: it finishes its tasks first, then closes the browser.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
}

/**
 * The one browser of a crawler process: launched on first use, launched again after it crashed or
 * was closed under us, closed with the process. Safe to close twice.
 */
export class BrowserHost {
  private current: Promise<Browser> | null = null;
  private closed = false;
  /** Browsers launched so far (a test reads it to see a relaunch). */
  launches = 0;

  constructor(
    private readonly launch: LaunchBrowser,
    private readonly logger: Logger,
  ) {}

  get(): Promise<Browser> {
    if (this.closed) return Promise.reject(new Error('the renderer is closed'));
    if (this.current) return this.current;
    this.launches += 1;
    const launching = this.launch().then((browser) => {
      browser.on('disconnected', () => {
        if (this.current === launching) this.current = null;
        if (!this.closed) this.logger.warn('browser gone; the next page starts a new one');
      });
      this.logger.info({ version: browser.version() }, 'browser started');
      return browser;
    });
    launching.catch(() => {
      if (this.current === launching) this.current = null;
    });
    this.current = launching;
    return launching;
  }

  /** The browser seems wedged: close it, so the next page gets a fresh one. */
  async restart(): Promise<void> {
    const browser = this.current;
    this.current = null;
    await browser?.then((b) => b.close()).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.restart();
  }
}
