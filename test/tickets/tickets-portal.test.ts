/**
 * "Contact us" as a person uses it, in Chromium (one browser for the file, one page reused),
 * axe on every page: a guest's ticket and a signed-in customer's, each answered by an agent
 * through the API, the reply shown (as text) and, for the customer, unread on the home page
 * until opened.
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, newSession } from '../support/fixtures';
import { outboxEvents } from '../support/webhooks';

jest.setTimeout(90_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;

beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }));
}, 120_000);

afterAll(() => portal?.stop());

async function axe(name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

const ticketIdOf = (url: string) => url.split('/tickets/')[1]!.split(/[?#]/)[0]!;
const reply = (id: string, body: string) => app.sandbox.POST('/tickets/{id}/messages', { params: { path: { id } }, body: { body } });

async function writeMessage(subject: string, body: string): Promise<void> {
  await page.getByLabel('What is it about?').selectOption('need-info-about-my-account');
  await page.getByLabel('Subject').fill(subject);
  await page.getByLabel('Message').fill(body);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('heading', { name: subject }).waitFor();
}

test("a guest writes from the Portal's entry and reads the agent's reply there", async () => {
  await page.context().clearCookies();
  await page.goto(`${app.config.portalUrl}/?organization=${app.organization.organization_id}&environment=sandbox`);
  await page.getByRole('link', { name: 'Contact us' }).click();
  await page.getByRole('heading', { name: 'Contact us' }).waitFor();
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Enter your name.').waitFor();
  await axe('contact-guest-refused');
  await page.getByLabel('Your name').fill('Jordan Miller');
  await page.getByLabel('E-mail').fill('jordan.miller@mail.debt-collection.example');
  await page.getByLabel('Phone').fill('(512) 555-0199');
  await writeMessage('Is this debt mine?', 'I got a letter <script>alert(1)</script> about a debt.');
  expect(await page.getByText('I got a letter <script>alert(1)</script> about a debt.').count()).toBe(1);
  await axe('ticket-guest');
  const id = ticketIdOf(page.url());
  expect((await app.sandbox.GET('/tickets/{id}', { params: { path: { id } } })).data!.data).toMatchObject({ source: 'guest', email: 'jordan.miller@mail.debt-collection.example' });

  await reply(id, 'We will send you the validation notice by mail.');
  await page.reload();
  await page.getByText('We will send you the validation notice by mail.').waitFor();
  expect(await outboxEvents(app, 'ticket.create', id)).toHaveLength(1);
});

test("a signed-in customer writes, the agent's reply shows unread on the home page until opened", async () => {
  const { customer, account } = await customerWithAccount(app.sandbox);
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'accounts_list' });
  await page.context().clearCookies();
  await page.goto(session.portal_url);
  await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
  await page.getByRole('link', { name: 'Contact us' }).click();
  expect(await page.getByLabel('E-mail').count()).toBe(0);
  await axe('contact-customer');
  await writeMessage('Question about my balance', 'Why is my balance higher than in October?');
  const id = ticketIdOf(page.url());
  await axe('ticket-customer');

  await reply(id, 'A late fee of $25.00 was added on October 20.');
  await page.getByRole('link', { name: 'My accounts' }).click();
  await page.getByRole('heading', { name: 'Your messages' }).waitFor();
  expect(await page.locator('li.unread').innerText()).toBe('Question about my balance (new reply)');
  await axe('home-unread');
  await page.getByRole('link', { name: 'Question about my balance' }).click();
  await page.getByText('A late fee of $25.00 was added on October 20.').waitFor();
  await page.getByLabel('Your reply').fill('Thank you.');
  await page.getByRole('button', { name: 'Send reply' }).click();
  await page.getByText('Thank you.').waitFor();
  await page.getByRole('link', { name: 'My accounts' }).click();
  await page.getByRole('heading', { name: 'Your messages' }).waitFor();
  expect(await page.locator('li.unread').count()).toBe(0);
  const ticket = (await app.sandbox.GET('/tickets/{id}', { params: { path: { id } } })).data!.data;
  expect(ticket).toMatchObject({ source: 'collect', is_read_by_customer: true, is_read_by_organization: false });
  expect(ticket.messages.map((message) => message.sender.type)).toEqual(['customer', 'user', 'customer']);
  const updates = await outboxEvents(app, 'ticket.update', id);
  expect(updates.at(-1)!.messages).toHaveLength(3);
});
