/** The Chromium of the @sparticuz/chromium package, headless, driven by playwright-core: nothing is downloaded. */
import chromium from '@sparticuz/chromium';
import AxeBuilder from '@axe-core/playwright';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

export async function launchBrowser(): Promise<Browser> {
  return playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
}

/** axe's serious and critical violations on the page as it is, each as `name: rule targets` ([] when none). */
export async function seriousViolations(page: Page, name = 'page'): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${name}: ${violation.id} ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}
