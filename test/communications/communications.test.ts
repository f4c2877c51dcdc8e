/**
 * Regulation F as an integrator sees it in the sandbox: the communications log, what a
 * debtor's e-mail says, opt-out by the link and by the API, quiet hours in the customer's
 * time zone (their own, their ZIP code's, the organization's), payment reminders exactly once
 * on the sandbox clock, and the log outliving the customer.
 */
import type { ApiClient } from '../../client';
import type { components } from '../../generated/schema';
import { sendToDebtor } from '../../server/communications/outgoing';
import { expectFieldError, newCustomer, newDebtAccount, testCard, unique, UNKNOWN_UUID } from '../support/fixtures';
import { DAY, sandboxDayAfter, sandboxNow } from '../support/sandbox-clock';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually } from '../support/webhooks';

type Communication = components['schemas']['Communication'];

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
  await api.PUT('/settings', { body: { contact_email: 'help@acme-recovery.example', contact_phone: '(800) 555-0100' } });
  await app.startWorkers();
});
afterAll(async () => app?.stop());

async function logOf(query: { customer_id?: string; kind?: Communication['kind']; status?: Communication['status'] }, client = api): Promise<Communication[]> {
  const { data, response } = await client.GET('/communications', { params: { query: { ...query, limit: 100 } } });
  expect(response.status).toBe(200);
  return data!.data;
}

/** This app has no SMTP_URL: a message that left the log is `logged` (written to the service's log), not `sent`. */
const sentEventually = (id: string) =>
  eventually(async () => {
    const { data } = await api.GET('/communications/{id}', { params: { path: { id } } });
    return data?.data.status === 'logged' ? data.data : undefined;
  }, `communication ${id} logged`);

async function payer(body: Partial<components['schemas']['CustomerCreate']> = {}, balance = 10_000) {
  const customer = await newCustomer(api, { email: `${unique('debtor')}@mail.debt-collection.example`, ...body });
  const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance });
  const { data } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } });
  return { customer, account, methodId: data!.data.id };
}

async function receiptFor(accountId: string, methodId: string) {
  const { data, response } = await api.POST('/charges', { body: { amount: 1000, debt_account_id: accountId, payment_method_id: methodId, send_email: true } });
  expect(response.status).toBe(201);
  const [receipt] = (await logOf({ kind: 'receipt' })).filter((row) => row.debt_account_id === accountId && row.subject.includes(data!.data.reference_number));
  return receipt!;
}

const optOutLinkOf = (text: string) => /To stop receiving these e-mails, open: (\S+)/.exec(text)![1]!;

describe('a receipt', () => {
  test('is logged with the organization, its contact, the debt-collector disclosure and the opt-out link, then sent by the mail job', async () => {
    const { customer, account, methodId } = await payer();
    const receipt = await receiptFor(account.id, methodId);
    expect(receipt).toMatchObject({ customer_id: customer.id, debt_account_id: account.id, channel: 'email', kind: 'receipt', to: customer.email, reason: null, held_until: null });
    expect(receipt.text).toContain('Your payment of $10.00');
    expect(receipt.text).toContain('Acme Recovery LLC\nContact: help@acme-recovery.example, (800) 555-0100');
    expect(receipt.text).toContain('This communication is from a debt collector.');
    // The link names this message (so the address it went to), signed.
    expect(optOutLinkOf(receipt.text)).toMatch(new RegExp(`^${app.config.portalUrl}/opt-out/v2\\.${receipt.id}\\.`));
    const sent = await sentEventually(receipt.id);
    expect(sent.sent_at).not.toBeNull();
    // With no SMTP_URL, the mail as sent is in the service's log, with RFC 8058's headers.
    const line = app.logs.find((entry) => entry.includes(receipt.subject) && entry.includes('List-Unsubscribe'));
    expect(line).toContain('List-Unsubscribe-Post');
    expect(line).toContain('List-Unsubscribe=One-Click');
  });

  test('the organization\'s own disclosure wording is printed; wording without "debt collector" is a 422', async () => {
    const bad = await api.PUT('/settings', { body: { debt_collector_disclosure: 'We collect money.' } });
    expect(bad.response.status).toBe(422);
    expectFieldError(bad.error, 'debt_collector_disclosure');
    const wording = 'Acme Recovery is a debt collector attempting to collect a debt; any information obtained will be used for that purpose.';
    expect((await api.PUT('/settings', { body: { debt_collector_disclosure: wording } })).data!.data.debt_collector_disclosure).toBe(wording);
    try {
      const { account, methodId } = await payer();
      expect((await receiptFor(account.id, methodId)).text).toContain(wording);
    } finally {
      await api.PUT('/settings', { body: { debt_collector_disclosure: 'This communication is from a debt collector. This is an attempt to collect a debt, and any information obtained will be used for that purpose.' } });
    }
  });
});

describe('opting out', () => {
  test('by the link: the page opts out only when its button is pressed, then the customer shows it', async () => {
    const { customer, account, methodId } = await payer();
    const link = optOutLinkOf((await receiptFor(account.id, methodId)).text);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Stop e-mails from Acme Recovery LLC');
    expect(html).toContain('>Stop e-mails</button>');
    const unchanged = (await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).data!.data;
    expect(unchanged.communication_preferences).toEqual({ email: 'allowed', changed_at: null, changed_by: null });

    // A mail client's one-click POST (RFC 8058): no cookie, no CSRF token.
    const click = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(click.status).toBe(200);
    expect(await click.text()).toContain('You will no longer receive e-mails');
    const after = (await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).data!.data;
    expect(after.communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'link' });
    expect(after.communication_preferences.changed_at).toBe((await sandboxNow(api)).toISOString().slice(0, 10) + after.communication_preferences.changed_at!.slice(10));
  });

  test('a forged link, or one whose signature is another customer\'s, changes nothing and says so', async () => {
    const first = await payer();
    const second = await payer();
    const firstReceipt = await receiptFor(first.account.id, first.methodId);
    const secondReceipt = await receiptFor(second.account.id, second.methodId);
    const link = optOutLinkOf(firstReceipt.text);
    const otherCustomers = link.replace(firstReceipt.id, secondReceipt.id);
    const forged = link.slice(0, -4) + (link.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const url of [otherCustomers, forged, `${app.config.portalUrl}/opt-out/v1.nothing`]) {
      for (const method of ['GET', 'POST']) {
        const answer = await fetch(url, { method });
        expect(answer.status).toBe(400);
        expect(await answer.text()).toContain('Nothing was changed');
      }
    }
    for (const { customer } of [first, second]) {
      expect((await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).data!.data.communication_preferences.email).toBe('allowed');
    }
  });

  test('by the API; then a receipt is still sent (whoever made the payment), and an agency-initiated e-mail is suppressed', async () => {
    const { customer, account, methodId } = await payer();
    const put = await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { communication_preferences: { email: 'opted_out' } } });
    expect(put.response.status).toBe(200);
    expect(put.data!.data.communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'api' });
    const receipt = await receiptFor(account.id, methodId);
    expect(receipt.status === 'queued' || receipt.status === 'logged').toBe(true);
    await sentEventually(receipt.id);

    // A payment reminder: a plan's first instalment reminded 3 days before its day.
    const start = await sandboxDayAfter(api, 10);
    expect((await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: start, amount: 4500 } })).response.status).toBe(201);
    await advanceTo(`${dayBefore(start, 3)}T18:00:00.000Z`);
    const [reminder, ...more] = await logOf({ customer_id: customer.id, kind: 'payment_reminder' });
    expect(more).toEqual([]);
    expect(reminder).toMatchObject({ status: 'suppressed', reason: 'opted_out', sent_at: null });
  });
});

const dayBefore = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) - days * DAY).toISOString().slice(0, 10);

async function advanceTo(time: string): Promise<void> {
  const { response, data } = await api.POST('/sandbox/clock', { body: { advance_to: time } });
  expect(response.status).toBe(200);
  expect(data!.data.status).toBe('ready');
}

describe('payment reminders and quiet hours', () => {
  test('a reminder at 07:00 local is held until 08:00 there (own zone, ZIP code, organization\'s), one at 09:00 goes at once; each exactly once', async () => {
    // December: Mountain time is UTC-7, so an instalment's 14:00 UTC is 07:00 in Denver, Phoenix and Boise, 09:00 in New York.
    expect((await api.PUT('/settings', { body: { time_zone: 'America/Boise' } })).data!.data.time_zone).toBe('America/Boise');
    const own = await payer({ time_zone: 'america/denver', address: { postal_code: '10001', city: 'New York' } });
    expect(own.customer.time_zone).toBe('America/Denver');
    const byZip = await payer({ address: { postal_code: '85004', city: 'Phoenix' } });
    const byOrganization = await payer();
    const eastern = await payer({ time_zone: 'America/New_York' });
    const start = await sandboxDayAfter(api, 12);
    for (const { account, methodId } of [own, byZip, byOrganization, eastern]) {
      const plan = await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: start, amount: 5000 } });
      expect(plan.response.status).toBe(201);
    }
    const reminderDay = dayBefore(start, 3);
    await advanceTo(`${reminderDay}T14:30:00.000Z`);
    const held: Communication[] = [];
    for (const { customer } of [own, byZip, byOrganization]) {
      const rows = await logOf({ customer_id: customer.id, kind: 'payment_reminder' });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 'held', reason: 'quiet_hours', held_until: `${reminderDay}T15:00:00.000Z`, sent_at: null, created_at: `${reminderDay}T14:00:00.000Z` });
      held.push(rows[0]!);
    }
    const [atNine] = await logOf({ customer_id: eastern.customer.id, kind: 'payment_reminder' });
    expect(atNine!.held_until).toBeNull();
    await sentEventually(atNine!.id);

    // What the reminder says: the amount, the date, the card's last four, a link to change them.
    const text = held[0]!.text;
    // The subject shows in an inbox list: the date, not the amount.
    expect(held[0]!.subject).toBe(`Payment reminder for ${new Date(`${start}T12:00:00Z`).toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' })}`);
    expect(text).toContain('your payment of $50.00 is due');
    expect(text).toContain('your card ending 4242');
    const link = /To change the payment method or the date, open: (\S+)/.exec(text)![1]!;
    expect(link).toContain(`${app.config.portalUrl}/s/`);
    expect(link).toContain(`/accounts/${own.account.id}`);
    expect(text).toContain('This communication is from a debt collector.');

    // 07:59:59 there: still held; 08:00: released and sent, the same row.
    await advanceTo(`${reminderDay}T14:59:59.000Z`);
    expect((await api.GET('/communications/{id}', { params: { path: { id: held[0]!.id } } })).data!.data.status).toBe('held');
    await advanceTo(`${reminderDay}T15:00:00.000Z`);
    for (const row of held) {
      const sent = await sentEventually(row.id);
      expect(sent).toMatchObject({ id: row.id, reason: 'quiet_hours', held_until: `${reminderDay}T15:00:00.000Z` });
      expect(Date.parse(sent.sent_at!)).toBeGreaterThanOrEqual(Date.parse(`${reminderDay}T15:00:00.000Z`));
    }

    // Past the first instalment and the second one's reminder: one reminder per instalment, never two.
    await advanceTo(`${dayBefore(start, -5)}T12:00:00.000Z`);
    for (const { customer } of [own, byZip, byOrganization, eastern]) {
      const rows = await logOf({ customer_id: customer.id, kind: 'payment_reminder' });
      expect(rows).toHaveLength(2);
      expect(new Set(rows.map((row) => row.subject)).size).toBe(2);
    }
    await api.PUT('/settings', { body: { time_zone: 'America/New_York' } });
  });

  test('reminder_days_before 0 turns reminders off', async () => {
    expect((await api.PUT('/settings', { body: { reminder_days_before: 0 } })).data!.data.reminder_days_before).toBe(0);
    try {
      const { customer, account, methodId } = await payer();
      const start = await sandboxDayAfter(api, 2);
      await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: start, amount: 5000 } });
      await advanceTo(`${start}T13:00:00.000Z`);
      expect(await logOf({ customer_id: customer.id, kind: 'payment_reminder' })).toEqual([]);
    } finally {
      await api.PUT('/settings', { body: { reminder_days_before: 3 } });
    }
  });
});

describe('GET /settings and PUT /settings', () => {
  test('defaults, a change of only the keys sent, each environment its own', async () => {
    const production = app.api;
    expect((await production.GET('/settings')).data!.data).toEqual({
      time_zone: 'America/New_York',
      reminder_days_before: 3,
      contact_email: 'ops@acme-recovery.example',
      contact_phone: null,
      mailing_address: null,
      debt_collector_disclosure: 'This communication is from a debt collector. This is an attempt to collect a debt, and any information obtained will be used for that purpose.',
      settlement_max_discount_percentage: 80,
      settlement_max_months: 24,
      dispute_hold: 'all',
      sender_name: 'Acme Recovery LLC',
      sender_email: null,
      reply_to_email: null,
      quiet_hours_no_overlap_hour: 8,
    });
    const changed = await production.PUT('/settings', { body: { reminder_days_before: 30 } });
    expect(changed.data!.data).toMatchObject({ reminder_days_before: 30, time_zone: 'America/New_York', contact_email: 'ops@acme-recovery.example' });
    expect((await production.PUT('/settings', { body: { time_zone: 'pacific/honolulu' } })).data!.data).toMatchObject({ reminder_days_before: 30, time_zone: 'Pacific/Honolulu' });
    expect((await api.GET('/settings')).data!.data.contact_phone).toBe('(800) 555-0100');
    expect((await production.GET('/settings')).data!.data.contact_phone).toBeNull();
  });

  test('422 on each invalid key, and nothing changes', async () => {
    const before = (await app.api.GET('/settings')).data!.data;
    for (const [body, key] of [
      [{ time_zone: 'Mars/Olympus_Mons', reminder_days_before: 5 }, 'time_zone'],
      [{ reminder_days_before: 31 }, 'reminder_days_before'],
      [{ reminder_days_before: -1 }, 'reminder_days_before'],
      [{ contact_email: 'not an address' }, 'contact_email'],
    ] as const) {
      const { response, error } = await app.api.PUT('/settings', { body: body as never });
      expect(response.status).toBe(422);
      expectFieldError(error, key);
    }
    expect((await app.api.GET('/settings')).data!.data).toEqual(before);
  });
});

describe('customers: time_zone and communication_preferences', () => {
  test('an unknown time zone is a 422 on POST and PUT; null clears it', async () => {
    const created = await api.POST('/customers', { body: { name: 'Tz', email: 'tz@mail.debt-collection.example', time_zone: 'America/Nowhere' } });
    expect(created.response.status).toBe(422);
    expectFieldError(created.error, 'time_zone');
    const customer = await newCustomer(api, { time_zone: 'America/Chicago' });
    expect(customer).toMatchObject({ time_zone: 'America/Chicago', communication_preferences: { email: 'allowed', changed_at: null, changed_by: null } });
    const bad = await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { time_zone: 'Europe/Atlantis' } });
    expect(bad.response.status).toBe(422);
    expectFieldError(bad.error, 'time_zone');
    const cleared = await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { time_zone: null } });
    expect(cleared.data!.data.time_zone).toBeNull();
  });
});

describe('GET /communications', () => {
  test('newest first, filtered; an unknown kind or status is a 422; another tenant\'s message is a 404', async () => {
    const { customer, account, methodId } = await payer();
    const first = await receiptFor(account.id, methodId);
    app.clock.advance(1000);
    const second = await receiptFor(account.id, methodId);
    expect((await logOf({ customer_id: customer.id })).map((row) => row.id)).toEqual([second.id, first.id]);
    for (const query of [{ kind: 'letter' }, { status: 'lost' }, { customer_id: 'CUST-1' }]) {
      const { response, error } = await api.GET('/communications', { params: { query: query as never } });
      expect(response.status).toBe(422);
      expectFieldError(error, `query.${Object.keys(query)[0]!}`);
    }
    expect((await app.other.GET('/communications/{id}', { params: { path: { id: first.id } } })).response.status).toBe(404);
    expect((await app.api.GET('/communications/{id}', { params: { path: { id: first.id } } })).response.status).toBe(404);
    expect((await api.GET('/communications/{id}', { params: { path: { id: UNKNOWN_UUID } } })).response.status).toBe(404);
    expect(await logOf({}, app.other)).toEqual([]);
  });

  test('a customer deleted keeps their log: their id and the address as sent', async () => {
    const customer = await newCustomer(api, { email: 'leaving@mail.debt-collection.example' });
    const now = await sandboxNow(api);
    const tenant = { organizationId: app.organization.organization_id, environment: 'sandbox' as const, tokenHash: '' };
    const row = await app.db.transaction((trx) =>
      sendToDebtor(app.deps, trx, tenant, { customerId: customer.id, kind: 'account_security', subject: 'Your sign-in link', body: 'Here is the link you asked for.', now }),
    );
    expect((await api.DELETE('/customers/{id}', { params: { path: { id: customer.id } } })).response.status).toBe(200);
    expect((await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).response.status).toBe(404);
    const kept = (await api.GET('/communications/{id}', { params: { path: { id: row!.id } } })).data!.data;
    expect(kept).toMatchObject({ customer_id: customer.id, to: 'leaving@mail.debt-collection.example', kind: 'account_security', subject: 'Your sign-in link' });
    expect((await logOf({ customer_id: customer.id })).map((entry) => entry.id)).toEqual([row!.id]);
  });
});
