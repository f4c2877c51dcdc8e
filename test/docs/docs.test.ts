/**
 * The HTML reference asks no other host for anything: `npm run docs` is built, opened in
 * Chromium with every request intercepted, clicked through as a reader would (a tag, an
 * operation, a webhook, the search), and any request that is not the file itself or a data:
 * URI fails the test (it is also refused, so nothing leaves the machine).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

const root = resolve(__dirname, '../..');
const file = pathToFileURL(join(root, 'docs', 'index.html')).href;
const screenshots = join(root, 'screenshots');

let browser: Browser;
let page: Page;
const elsewhere: string[] = [];
const local: string[] = [];

beforeAll(async () => {
  execFileSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'scripts', 'docs.ts')], { cwd: root, stdio: 'pipe' });
  browser = await playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === file || url.startsWith('data:')) {
      local.push(url);
      await route.continue();
    } else {
      elsewhere.push(url);
      await route.abort('blockedbyclient');
    }
  });
  await page.goto(file);
  await page.getByRole('heading', { name: /Debt Collection Service API/ }).first().waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

test('opening the page asks for the file alone', async () => {
  expect(local).toContain(file);
  expect(elsewhere).toEqual([]);
});

test('a few clicks through the reference ask no other host either', async () => {
  const sidebar = page.locator('[data-component-name="Menu/MenuItem"]');
  await sidebar.getByText('Customers', { exact: true }).click();
  await sidebar.getByText('Create a customer', { exact: true }).click();
  await page.getByRole('heading', { name: 'Create a customer' }).waitFor();
  await page.getByText('Expand all').first().click();
  await sidebar.getByText('Resource events', { exact: true }).click();
  await sidebar.getByText('Customer created', { exact: true }).click();
  await page.getByRole('heading', { name: 'Customer created' }).waitFor();
  await page.getByText(/^Search/).first().click();
  await page.keyboard.type('lookup');
  await page.getByText(/Look up debt accounts/i).first().waitFor();
  await page.keyboard.press('Escape');
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, 'docs.png') });
  expect(elsewhere).toEqual([]);
});
