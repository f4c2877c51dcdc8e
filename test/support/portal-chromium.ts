/**
 * The Portal as a person sees it, in Chromium: what each Portal file in a browser needs before
 * its first test, made once here. (A Portal without a browser, over plain HTTP, is
 * portal-browser.ts.)
 */
import type { Browser, Page } from 'playwright-core';
import type { Config } from '../../server/kernel/config';
import { launchBrowser } from './browser';
import { startTestApp, type TestApp } from './test-app';
import { subscribeToEverything } from './webhooks';

/** A phone's screen: most debtors open their link on one. */
export const PHONE = { width: 375, height: 812 };

export interface PortalInChromium {
  app: TestApp;
  browser: Browser;
  /** One page at 375 px that reaches the app alone: any other host is refused and recorded. */
  page: Page;
  /** Every request the page made to another host (each was refused). */
  elsewhere: string[];
  /** Closes the browser, then stops the app. */
  stop(): Promise<void>;
}

/** A page of `browser` at 375 px that reaches `origin` alone: any other URL is refused and pushed onto `elsewhere`. */
export async function phonePage(browser: Browser, origin: string, elsewhere: string[] = []): Promise<Page> {
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin)) return route.continue();
    elsewhere.push(url);
    return route.abort('blockedbyclient');
  });
  return page;
}

/**
 * The app (with `overrides`), a webhook of the sandbox subscribed to every event (unless
 * `subscribe` is false), Chromium and its phone page on the app.
 */
export async function startPortalInChromium(overrides: Partial<Config> = {}, { subscribe = true } = {}): Promise<PortalInChromium> {
  const app = await startTestApp(overrides);
  let browser: Browser | undefined;
  try {
    if (subscribe) await subscribeToEverything(app.sandbox);
    browser = await launchBrowser();
    const elsewhere: string[] = [];
    const page = await phonePage(browser, app.origin, elsewhere);
    const opened = browser;
    return {
      app,
      browser: opened,
      page,
      elsewhere,
      stop: async () => {
        await opened.close();
        await app.stop();
      },
    };
  } catch (error) {
    await browser?.close();
    await app.stop();
    throw error;
  }
}
