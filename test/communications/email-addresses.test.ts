/**
 * E-mail as an examiner reads it, caught on a real SMTP server: an opt-out belongs to the
 * address (every customer record with it, the agency cannot lift it, multipart one-click), two
 * agencies send under their own names with replies routed to them, quiet hours hold in every
 * zone the customer is known to be in (a New York ZIP and a Honolulu phone), a receipt of a
 * scheduled charge waits like any agency message, no message to a work address, and an
 * e-mailed link opens the verification step, not the account.
 */
import type { Browser } from 'playwright-core';
import type { ApiClient } from '../../client';
import type { components } from '../../generated/schema';
import { sendToDebtor } from '../../server/communications/outgoing';
import { launchBrowser, seriousViolations } from '../support/browser';
import { expectFieldError, newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import { phonePage } from '../support/portal-chromium';
import { sandboxDayAfter, sandboxNow } from '../support/sandbox-clock';
import { startSmtpServer, type SmtpServer } from '../support/smtp';
import { sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { eventually } from '../support/webhooks';

type Communication = components['schemas']['Communication'];

let smtp: SmtpServer;
let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  smtp = await startSmtpServer();
  app = await startTestApp({ smtpUrl: smtp.url });
  api = app.sandbox;
  await app.startWorkers();
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const address = (prefix: string) => `${unique(prefix)}@mail.debt-collection.example`.toLowerCase();

async function customerOf(id: string, client = api) {
  return (await client.GET('/customers/{id}', { params: { path: { id } } })).data!.data;
}

async function logOf(customerId: string, client = api): Promise<Communication[]> {
  return (await client.GET('/communications', { params: { query: { customer_id: customerId, limit: 100 } } })).data!.data;
}

const sentEventually = (id: string, client = api) =>
  eventually(async () => {
    const row = (await client.GET('/communications/{id}', { params: { path: { id } } })).data?.data;
    return row?.status === 'sent' ? row : undefined;
  }, `communication ${id} sent`);

/** A message of `kind` to the customer, written as the service writes every one. */
async function message(customerId: string, kind: Communication['kind'], tenant = sandboxTenantOf(app), client = api) {
  const now = await sandboxNow(client).catch(() => new Date());
  return (await app.db.transaction((trx) => sendToDebtor(app.deps, trx, tenant, { customerId, kind, subject: `A ${kind}`, body: 'Hello.', now })))!;
}

const optOutLinkOf = (text: string) => /To stop receiving these e-mails, open: (\S+)/.exec(text)![1]!;

describe('an opt-out belongs to the address', () => {
  test('opting out by one record\'s link (multipart one-click) stops mail to the same address on another; the agency cannot undo it; only the debtor can', async () => {
    const email = address('shared');
    const first = await newCustomer(api, { email });
    const second = await newCustomer(api, { email: email.toUpperCase() });
    const receipt = await message(first.id, 'receipt');
    const link = optOutLinkOf(receipt.text);

    // RFC 8058 §3.1: a mail client posts multipart/form-data, with no cookie.
    const form = new FormData();
    form.append('List-Unsubscribe', 'One-Click');
    const click = await fetch(link, { method: 'POST', body: form });
    expect(click.status).toBe(200);
    expect(await click.text()).toContain('You will no longer receive e-mails');

    expect((await customerOf(second.id)).communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'link' });
    const suppressed = await message(second.id, 'portal_link');
    expect(suppressed).toMatchObject({ status: 'suppressed', reason: 'opted_out' });
    // A record made later with the address is opted out too.
    const later = await newCustomer(api, { email });
    expect(later.communication_preferences.email).toBe('opted_out');

    const lifted = await api.PUT('/customers/{id}', { params: { path: { id: second.id } }, body: { communication_preferences: { email: 'allowed' } } });
    expect(lifted.response.status).toBe(409);
    expect(lifted.error).toMatchObject({ errorCode: 'conflict' });
    expect((await customerOf(second.id)).communication_preferences.email).toBe('opted_out');

    // The debtor opts back in on the confirmation page.
    const page = await (await fetch(link)).text();
    expect(page).toContain('>Start e-mails again</button>');
    const back = await fetch(`${link}/opt-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(back.status).toBe(200);
    expect((await customerOf(later.id)).communication_preferences).toMatchObject({ email: 'allowed', changed_by: 'link' });

    const history = (await api.GET('/email-opt-outs', { params: { query: { email: email.toUpperCase() } } })).data!.data;
    expect(history.map(({ email_preference, changed_by, customer_id }) => ({ email_preference, changed_by, customer_id }))).toEqual([
      { email_preference: 'opted_out', changed_by: 'link', customer_id: first.id },
      { email_preference: 'allowed', changed_by: 'link', customer_id: first.id },
    ]);
    // The history is append-only: the database refuses to change or delete it.
    await expect(app.db('email_opt_out_history').where({ address: email }).update({ opted_out: true })).rejects.toThrow(/append-only/);
    await expect(app.db('email_opt_out_history').where({ address: email }).delete()).rejects.toThrow(/append-only/);
    expect((await api.GET('/email-opt-outs', { params: { query: { email: 'not an address' } } })).response.status).toBe(422);
  });

  test('the agency records an opt-out for the address: every record with it shows it', async () => {
    const email = address('by-agency');
    const first = await newCustomer(api, { email });
    const second = await newCustomer(api, { email });
    const put = await api.PUT('/customers/{id}', { params: { path: { id: first.id } }, body: { communication_preferences: { email: 'opted_out' } } });
    expect(put.data!.data.communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'api' });
    expect((await customerOf(second.id)).communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'api' });
    // A new address brings its own state.
    const moved = await api.PUT('/customers/{id}', { params: { path: { id: second.id } }, body: { email: address('moved') } });
    expect(moved.data!.data.communication_preferences.email).toBe('allowed');
  });

  test('a link opts out the address its e-mail went to, even after the customer\'s address changed', async () => {
    const old = address('old');
    const customer = await newCustomer(api, { email: old });
    const link = optOutLinkOf((await message(customer.id, 'receipt')).text);
    const changed = await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { email: address('new') } });
    expect(changed.response.status).toBe(200);
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);
    expect((await customerOf(customer.id)).communication_preferences.email).toBe('allowed');
    expect((await newCustomer(api, { email: old })).communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'link' });
  });
});

describe('the agency\'s own sender', () => {
  test('two agencies on one deployment send under their own names; the reply address is the agency\'s; the log matches the wire', async () => {
    const refused = await app.other.PUT('/settings', { body: { sender_name: 'Debt Collection Services' } });
    expect(refused.response.status).toBe(422);
    expectFieldError(refused.error, 'sender_name');
    expect((await app.other.PUT('/settings', { body: { sender_email: 'notices@northwind.example', reply_to_email: 'help@northwind.example' } })).response.status).toBe(200);

    const acmeAddress = address('acme');
    const northwindAddress = address('northwind');
    const acme = await newCustomer(app.api, { email: acmeAddress });
    const northwind = await newCustomer(app.other, { email: northwindAddress });
    const production = (organizationId: string) => ({ organizationId, environment: 'production' as const, tokenHash: '' });
    const northwindId = (await app.db('organizations').where({ name: 'Northwind Credit' }).first('id')).id as string;
    const acmeRow = await message(acme.id, 'receipt', production(app.organization.organization_id), app.api);
    const northwindRow = await message(northwind.id, 'receipt', production(northwindId), app.other);

    const [acmeMail] = await eventually(() => (smtp.to(acmeAddress).length > 0 ? smtp.to(acmeAddress) : undefined), 'the Acme e-mail');
    const [northwindMail] = await eventually(() => (smtp.to(northwindAddress).length > 0 ? smtp.to(northwindAddress) : undefined), 'the Northwind e-mail');
    expect(acmeMail!.headers.from).toBe('Acme Recovery LLC <no-reply@debt-collection.example>');
    expect(acmeMail!.headers['reply-to']).toBe('ops@acme-recovery.example');
    expect(northwindMail!.headers.from).toBe('Northwind Credit <notices@northwind.example>');
    expect(northwindMail!.headers['reply-to']).toBe('help@northwind.example');
    expect(northwindMail!.mailFrom).toBe('notices@northwind.example');
    for (const mail of [acmeMail!, northwindMail!]) expect(mail.headers.from).not.toMatch(/debt collection/i);

    const logged = await sentEventually(northwindRow.id, app.other);
    expect(logged).toMatchObject({ from: northwindMail!.headers.from, reply_to: 'help@northwind.example', subject: northwindMail!.headers.subject });
    expect(logged.headers).toMatchObject({
      'Message-ID': northwindMail!.headers['message-id'],
      'List-Unsubscribe': northwindMail!.headers['list-unsubscribe'],
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect((await sentEventually(acmeRow.id, app.api)).from).toBe(acmeMail!.headers.from);
  });

  test('the disclosure must carry both halves of §807(11)\'s initial wording', async () => {
    for (const wording of ['This communication is from a debt collector.', 'This is from a debt collector attempting to collect a debt.', 'A debt collector: any information obtained will be used for that purpose.']) {
      const { response, error } = await api.PUT('/settings', { body: { debt_collector_disclosure: wording } });
      expect(response.status).toBe(422);
      expectFieldError(error, 'debt_collector_disclosure');
    }
    const wording = 'We are a debt collector\nattempting to collect a debt. Any information obtained will be used for that purpose.';
    expect((await api.PUT('/settings', { body: { debt_collector_disclosure: wording } })).data!.data.debt_collector_disclosure).toBe(wording);
  });
});

describe('quiet hours in every known zone, and receipts the debtor did not ask for', () => {
  test('a New York ZIP with a Honolulu phone: nothing leaves at 04:00 Honolulu time; a receipt of a payment made now goes at once', async () => {
    const email = address('two-zones');
    const customer = await newCustomer(api, { email, phone: '(808) 555-0147', address: { postal_code: '10001', city: 'New York' } });
    const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 50_000 });
    const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data;
    const day = await sandboxDayAfter(api, 3);
    const scheduled = await api.POST('/charges', { body: { debt_account_id: account.id, payment_method_id: method.id, amount: 1500, scheduled_at: day, send_email: true } });
    expect(scheduled.response.status).toBe(201);
    // 14:00 UTC in December: 09:00 in New York, 04:00 in Honolulu.
    const advanced = await api.POST('/sandbox/clock', { body: { advance_to: `${day}T14:00:30.000Z` } });
    expect(advanced.data!.data.status).toBe('ready');
    const [receipt] = (await logOf(customer.id)).filter((row) => row.kind === 'scheduled_receipt');
    expect(receipt).toMatchObject({ status: 'held', reason: 'quiet_hours', held_until: `${day}T18:00:00.000Z` });
    const reminder = await message(customer.id, 'payment_reminder');
    expect(reminder).toMatchObject({ status: 'held', held_until: new Date(`${day}T18:00:00.000Z`) });

    // A payment the debtor makes now: its receipt answers them at once.
    const now = await api.POST('/charges', { body: { debt_account_id: account.id, payment_method_id: method.id, amount: 1000, send_email: true } });
    expect(now.response.status).toBe(201);
    const immediate = (await logOf(customer.id)).find((row) => row.kind === 'receipt')!;
    await sentEventually(immediate.id);
    const subjects = smtp.to(email).map((mail) => mail.headers.subject);
    expect(subjects).toContain(immediate.subject);
    expect(subjects).not.toContain(receipt!.subject);
    // The charge's own reminder, due at 14:00 UTC three days before, waited for 08:00 in Honolulu too.
    const threeDaysBefore = new Date(Date.parse(`${day}T00:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
    const [reminded] = (await logOf(customer.id)).filter((row) => row.kind === 'payment_reminder' && row.subject.startsWith('Payment reminder'));
    expect(reminded).toMatchObject({ reason: 'quiet_hours', held_until: `${threeDaysBefore}T18:00:00.000Z`, created_at: `${threeDaysBefore}T14:00:00.000Z` });
  });

  test('an opted-out address gets no receipt of a scheduled charge; a work address gets nothing at all', async () => {
    const work = await newCustomer(api, { email: address('work'), email_source: 'creditor', email_work_address: true, email_creditor_notice_date: '2026-01-15' });
    expect(work).toMatchObject({ email_source: 'creditor', email_work_address: true, email_creditor_notice_date: '2026-01-15' });
    expect(await message(work.id, 'receipt')).toMatchObject({ status: 'suppressed', reason: 'work_address' });
    const optedOut = await newCustomer(api, { email: address('stopped') });
    await api.PUT('/customers/{id}', { params: { path: { id: optedOut.id } }, body: { communication_preferences: { email: 'opted_out' } } });
    expect(await message(optedOut.id, 'scheduled_receipt')).toMatchObject({ status: 'suppressed', reason: 'opted_out' });
    expect(await message(optedOut.id, 'receipt')).toMatchObject({ status: 'queued' });

    const bad = await api.POST('/customers', { body: { name: 'No source', email: address('bad'), email_source: 'debtor', email_creditor_notice_date: '2026-01-15' } });
    expect(bad.response.status).toBe(422);
    expectFieldError(bad.error, 'email_creditor_notice_date');
    // A new address without its facts starts from the defaults: they described the old one.
    const changed = await api.PUT('/customers/{id}', { params: { path: { id: work.id } }, body: { email: address('home') } });
    expect(changed.data!.data).toMatchObject({ email_source: 'other', email_work_address: false, email_creditor_notice_date: null });
  });
});

describe('links of e-mails', () => {
  let browser: Browser;
  afterAll(async () => browser?.close());

  test('a payment reminder\'s link opens the verification step, not the account; the right ZIP code then opens it', async () => {
    const customer = await newCustomer(api, { name: 'Rosa Delgado', email: address('reminded'), time_zone: 'America/New_York', address: { postal_code: '78704', city: 'Austin' } });
    const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 12_345 });
    const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data;
    const start = await sandboxDayAfter(api, 10);
    expect((await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: start, amount: 2500 } })).response.status).toBe(201);
    const reminderDay = new Date(Date.parse(`${start}T00:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
    await api.POST('/sandbox/clock', { body: { advance_to: `${reminderDay}T18:00:00.000Z` } });
    const reminder = (await logOf(customer.id)).find((row) => row.kind === 'payment_reminder')!;
    expect(reminder.subject).not.toContain('$');
    expect(reminder.text).toContain('$25.00');
    const link = /To change the payment method or the date, open: (\S+)/.exec(reminder.text)![1]!;

    browser = await launchBrowser();
    const page = await phonePage(browser, app.origin);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    const shown = await page.content();
    expect(shown).not.toContain('Rosa');
    expect(shown).not.toContain('123.45');
    expect(await seriousViolations(page, 'verify')).toEqual([]);
    // Typing the account's address by hand does not skip the step.
    await page.goto(`${app.config.portalUrl}/accounts/${account.id}`);
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await page.getByLabel('ZIP code').fill('78704');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/accounts/);
    expect(await page.content()).toContain('123.45');
    await page.context().close();
  });
});
