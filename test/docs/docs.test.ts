/**
 * The HTML references ask no other host for anything: `npm run docs` is built, and each of
 * its three files (the API's, the Portal's and the operating interface's) is opened in Chromium with every request
 * intercepted and clicked through as a reader would (a tag, an operation, a webhook, the
 * search); any request that is not the file itself or a data: URI fails the test (it is also
 * refused, so nothing leaves the machine).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';

const root = resolve(__dirname, '../..');
const file = pathToFileURL(join(root, 'docs', 'index.html')).href;
const portalFile = pathToFileURL(join(root, 'docs', 'portal.html')).href;
const operateFile = pathToFileURL(join(root, 'docs', 'operate.html')).href;
const screenshots = join(root, 'screenshots');

let browser: Browser;
let page: Page;
let portalPage: Page;
let operatePage: Page;
const elsewhere: string[] = [];
const local: string[] = [];

/** A page that lets through only `file` itself and data: URIs, and records everything else. */
async function openOffline(file: string, heading: RegExp): Promise<Page> {
  const opened = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await opened.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === file || url.startsWith('data:')) {
      local.push(url);
      await route.continue();
    } else {
      elsewhere.push(url);
      await route.abort('blockedbyclient');
    }
  });
  await opened.goto(file);
  await opened.getByRole('heading', { name: heading }).first().waitFor();
  return opened;
}

beforeAll(async () => {
  execFileSync(join(root, 'node_modules', '.bin', 'tsx'), [join(root, 'scripts', 'docs.ts')], { cwd: root, stdio: 'pipe' });
  browser = await launchBrowser();
  page = await openOffline(file, /Debt Collection Service API/);
  portalPage = await openOffline(portalFile, /Debt Collection Service Portal/);
  operatePage = await openOffline(operateFile, /Debt Collection Service Operations/);
  // Three references built (the API's alone takes most of a minute on a loaded 2-core machine), then opened.
}, 300_000);

afterAll(async () => {
  await browser?.close();
});

test('opening the pages asks for the files alone', async () => {
  expect(local).toContain(file);
  expect(local).toContain(portalFile);
  expect(local).toContain(operateFile);
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

test('the Portal reference shows the Portal entry and the short link, and the API reference neither', async () => {
  const sidebar = portalPage.locator('[data-component-name="Menu/MenuItem"]');
  await sidebar.getByText('Portal entry', { exact: true }).click();
  await sidebar.getByText('Open the accounts list of a session', { exact: true }).click();
  await portalPage.getByRole('heading', { name: 'Open the accounts list of a session' }).waitFor();
  await sidebar.getByText('Short links', { exact: true }).click();
  await sidebar.getByText('Follow a short link', { exact: true }).click();
  await portalPage.getByRole('heading', { name: 'Follow a short link' }).waitFor();
  mkdirSync(screenshots, { recursive: true });
  await portalPage.screenshot({ path: join(screenshots, 'docs-portal.png') });
  const apiSidebar = page.locator('[data-component-name="Menu/MenuItem"]');
  expect(await apiSidebar.getByText('Portal entry', { exact: true }).count()).toBe(0);
  expect(elsewhere).toEqual([]);
});

test('the operating reference shows the probes and the metrics, and the API reference neither', async () => {
  const sidebar = operatePage.locator('[data-component-name="Menu/MenuItem"]');
  await sidebar.getByText('Health', { exact: true }).click();
  await sidebar.getByText('Whether the process answers', { exact: true }).click();
  await operatePage.getByRole('heading', { name: 'Whether the process answers' }).waitFor();
  // 'Metrics' is twice in the menu: the description's section, then the tag.
  await sidebar.getByText('Metrics', { exact: true }).last().click();
  await sidebar.getByText('Prometheus metrics', { exact: true }).click();
  await operatePage.getByRole('heading', { name: 'Prometheus metrics' }).waitFor();
  mkdirSync(screenshots, { recursive: true });
  await operatePage.screenshot({ path: join(screenshots, 'docs-operate.png') });
  const apiSidebar = page.locator('[data-component-name="Menu/MenuItem"]');
  expect(await apiSidebar.getByText('Prometheus metrics', { exact: true }).count()).toBe(0);
  expect(elsewhere).toEqual([]);
});
