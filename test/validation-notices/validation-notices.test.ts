/**
 * The validation notice as an agency and a consumer see it: a parent with two children gets one
 * notice (Model Form B-1) in English or Spanish, as HTML and as a PDF whose text says the
 * itemization and the end date (across Christmas); e-mailed over real SMTP only with E-SIGN
 * consent, else a letter for the print vendor; either way a row of the communications log, and
 * `validation_notice_sent_at` set by the service.
 */
import type { ApiClient } from '../../client';
import type { components } from '../../generated/schema';
import { expectFieldError, newCustomer, newDebtAccount, newSession, unique } from '../support/fixtures';
import { openPortal } from '../support/portal-browser';
import { pdfPages, pdfText } from '../support/pdf-text';
import { bodyOf, startSmtpServer, type SmtpServer } from '../support/smtp';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually } from '../support/webhooks';

type Schemas = components['schemas'];

/** A Tuesday, 10:00 in New York: the receipt days skip Christmas Day (Friday) and the weekend. */
const SENT = new Date('2026-12-22T15:00:00.000Z');
const ENDS_ON = '2027-01-29';

let app: TestApp;
let api: ApiClient;
let smtp: SmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
  app = await startTestApp({ smtpUrl: smtp.url });
  app.clock.set(SENT);
  api = app.api;
  await api.PUT('/settings', {
    body: { contact_email: 'help@acme-recovery.example', contact_phone: '(800) 555-0100', mailing_address: '100 Congress Ave, Suite 400\nAustin, TX 78701' },
  });
  await app.startWorkers();
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const normalized = (text: string) => text.replace(/\s+/g, ' ');

/** Maria with an address, a parent account and two itemized children (each itemization = its balance). */
async function family(customer: Partial<Schemas['CustomerCreate']> = {}) {
  const debtor = await newCustomer(api, {
    email: `${unique('maria')}@mail.debt-collection.example`,
    address: { line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX', postal_code: '78704' },
    ...customer,
  } as Schemas['CustomerCreate']);
  const parentId = unique('PARENT');
  const parent = await newDebtAccount(api, debtor.id, { external_id: parentId, balance: 0, locations: [{ name: 'Emergency room visit', type: 'product_type' }] });
  const first = await newDebtAccount(api, debtor.id, {
    external_id: unique('CHILD'),
    parent_external_id: parentId,
    external_account_number: '4417-0093-2210',
    balance: 112500,
    itemization: { itemization_date: '2026-06-30', kind: 'charge_off', amount: 120000, fees: 2500, payments_and_credits: 10000 },
  });
  const second = await newDebtAccount(api, debtor.id, {
    external_id: unique('CHILD'),
    parent_external_id: parentId,
    external_account_number: '4417-0093-2211',
    balance: 65450,
    itemization: { itemization_date: '2026-07-15', kind: 'last_statement', amount: 64250, interest: 1200 },
  });
  return { debtor, parent, children: [first, second] };
}

const CONSENT = { given_at: '2026-11-28T16:12:00.000Z', method: 'recorded_call', consent_version: 'acme-edelivery-2026-01' } as const;

async function send(accountId: string, body: Schemas['ValidationNoticeCreate'] = {}) {
  return api.POST('/debt-accounts/{id}/validation-notice', { params: { path: { id: accountId } }, body });
}

async function fileOf(id: string, format: 'pdf' | 'html') {
  const { response, data } = await api.GET('/validation-notices/{id}/file', { params: { path: { id }, query: { format } }, parseAs: 'arrayBuffer' });
  expect(response.status).toBe(200);
  return { response, bytes: Buffer.from(data as unknown as ArrayBuffer) };
}

const sentOf = async (id: string) => (await api.GET('/debt-accounts/{id}', { params: { path: { id } } })).data!.data.validation_notice_sent_at;

describe('POST /debt-accounts/{id}/validation-notice', () => {
  test('a parent with two children, in English, with consent: one notice itemizing both, e-mailed over SMTP, logged, the PDF and HTML say it, the accounts dated', async () => {
    const { debtor, parent, children } = await family();
    const { data, response, error } = await send(parent.id, { esign_consent: CONSENT });
    expect(response.status).toBe(201);
    const notice = data!.data;
    expect(error).toBeUndefined();
    expect(notice).toMatchObject({
      debt_account_id: parent.id,
      debt_account_ids: children.map((child) => child.id),
      customer_id: debtor.id,
      language: 'en',
      delivery: 'email',
      to: debtor.email,
      sent_on: '2026-12-22',
      validation_period_ends_on: ENDS_ON,
      amount_due: 177950,
      esign_consent: { ...CONSENT, source: 'request' },
      procedure_1006_42c: false,
    });

    for (const id of [parent.id, ...children.map((child) => child.id)]) expect(await sentOf(id)).toBe('2026-12-22');
    expect((await api.GET('/debt-accounts/{id}', { params: { path: { id: parent.id } } })).data!.data.validation_period_ends_on).toBe(ENDS_ON);

    const log = (await api.GET('/communications/{id}', { params: { path: { id: notice.communication_id } } })).data!.data;
    expect(log).toMatchObject({ channel: 'email', kind: 'validation_notice', to: debtor.email, debt_account_id: parent.id, subject: 'Important notice from Acme Recovery LLC' });
    const mail = await eventually(async () => smtp.to(debtor.email)[0], 'the notice over SMTP');
    const body = normalized(bodyOf(mail));
    expect(body).toContain('Acme Recovery LLC is a debt collector. We are trying to collect a debt that you owe to Lakeside Medical Center.');
    expect(body).toContain('Call or write to us by January 29, 2027, to dispute all or part of the debt.');
    expect(body).toContain('This communication is from a debt collector.');
    await eventually(async () => ((await api.GET('/communications/{id}', { params: { path: { id: log.id } } })).data!.data.status === 'sent' ? true : undefined), 'logged as sent');

    const pdf = await fileOf(notice.id, 'pdf');
    expect(pdf.response.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdfPages(pdf.bytes)).toBeGreaterThanOrEqual(1);
    const text = pdfText(pdf.bytes);
    for (const phrase of [
      'Acme Recovery LLC 100 Congress Ave, Suite 400 Austin, TX 78701',
      'To: Maria Gonzalez 1208 Oak Hollow Dr Austin, TX 78704',
      'You had an Emergency room visit from Lakeside Medical Center with account number 4417-0093-2210.',
      'As of June 30, 2026, you owed:$1,200.00',
      'You were charged this amount in fees:+ $25.00',
      'You paid or were credited this amount toward the debt:– $100.00',
      'Total amount of the debt now:$1,125.00',
      'with account number 4417-0093-2211.',
      'You were charged this amount in interest:+ $12.00',
      'Total amount of the debt now:$654.50',
      'Total amount of the debts now:$1,779.50',
      'Call or write to us by January 29, 2027, to dispute all or part of the debt.',
      'If you write by January 29, 2027, we must stop collection until we send you that information.',
      'Go to www.cfpb.gov/debt-collection',
      'Póngase en contacto con nosotros para solicitar una copia de este formulario en español.',
      'How do you want to respond?',
      'This is not my debt.',
      'The amount is wrong.',
      'Other (please describe on reverse or attach additional information).',
      'I want you to send me the name and address of the original creditor.',
      'Quiero este formulario en español.',
    ]) expect(text).toContain(phrase);

    const html = (await fileOf(notice.id, 'html')).bytes.toString('utf8');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<h2>How can you dispute the debt?</h2>');
    expect(normalized(html)).toContain('<th scope="row">Total amount of the debts now:</th><td>$1,779.50</td>');
    expect(html).toContain('<strong>January 29, 2027</strong>');
  });

  test('in Spanish without consent: a letter for the print vendor (no e-mail), logged with channel mail, the Spanish form in the PDF and the HTML', async () => {
    const { debtor, parent } = await family();
    const { data, response } = await send(parent.id, { language: 'es' });
    expect(response.status).toBe(201);
    const notice = data!.data;
    expect(notice).toMatchObject({ language: 'es', delivery: 'mail', to: '1208 Oak Hollow Dr, Austin, TX 78704', esign_consent: null, validation_period_ends_on: ENDS_ON });
    const log = (await api.GET('/communications/{id}', { params: { path: { id: notice.communication_id } } })).data!.data;
    expect(log).toMatchObject({ channel: 'mail', kind: 'validation_notice', to: '1208 Oak Hollow Dr, Austin, TX 78704', status: 'sent', subject: 'Aviso importante de Acme Recovery LLC' });
    expect(smtp.to(debtor.email)).toEqual([]);

    const text = pdfText((await fileOf(notice.id, 'pdf')).bytes);
    for (const phrase of [
      'Acme Recovery LLC es un cobrador de deudas.',
      'Al 30 de junio de 2026, usted debía:$1,200.00',
      'Cantidad total de las deudas ahora:$1,779.50',
      'Llámenos o escríbanos antes del 29 de enero de 2027 para disputar toda o parte de la deuda.',
      '¿Cómo desea responder?',
      'Esta no es mi deuda.',
      'La cantidad es incorrecta.',
      'Quiero que me envíen el nombre y la dirección del acreedor original.',
    ]) expect(text).toContain(phrase);
    expect(text).not.toContain('Quiero este formulario en español.');
    const html = (await fileOf(notice.id, 'html')).bytes.toString('utf8');
    expect(html).toContain('<html lang="es">');
    expect(html).toContain('¿Cómo puede usted disputar la deuda?');
  });

  test('e-mail asked without consent, or to a customer who opted out, is a 422 on delivery and nothing is sent or dated', async () => {
    const { parent } = await family();
    const asked = await send(parent.id, { delivery: 'email' });
    expect(asked.response.status).toBe(422);
    expectFieldError(asked.error, 'delivery');
    expect(await sentOf(parent.id)).toBeNull();
    expect((await api.GET('/communications', { params: { query: { debt_account_id: parent.id } } })).data!.data).toEqual([]);

    const other = await family();
    const optOut = await api.PUT('/customers/{id}', { params: { path: { id: other.debtor.id } }, body: { communication_preferences: { email: 'opted_out' } } });
    expect(optOut.response.status).toBe(200);
    const optedOut = await send(other.parent.id, { delivery: 'email', esign_consent: CONSENT });
    expect(optedOut.response.status).toBe(422);
    expect((optedOut.error as { errors: Record<string, string[]> }).errors.delivery![0]).toContain('opted out');
    // Omitted, the delivery falls back to a letter.
    expect((await send(other.parent.id, { esign_consent: CONSENT })).data!.data.delivery).toBe('mail');
  });

  test('the §1006.42(c) procedure allows e-mail without a consent on record', async () => {
    const { parent } = await family();
    const { data, response } = await send(parent.id, { procedure_1006_42c: true });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({ delivery: 'email', esign_consent: null, procedure_1006_42c: true });
  });

  test('an account without an itemization, or whose itemization is not its balance, or no mailing address: 422, nothing sent', async () => {
    const debtor = await newCustomer(api, { address: { line1: '1 Main St', city: 'Austin', state: 'TX', postal_code: '78704' } } as never);
    const bare = await newDebtAccount(api, debtor.id, { external_id: unique('ACC'), balance: 5000 });
    const missing = await send(bare.id);
    expect(missing.response.status).toBe(422);
    expectFieldError(missing.error, 'itemization');

    const off = await newDebtAccount(api, debtor.id, { external_id: unique('ACC'), balance: 5000, itemization: { itemization_date: '2026-06-30', kind: 'transaction', amount: 4000 } });
    const wrong = await send(off.id);
    expect(wrong.response.status).toBe(422);
    expect((wrong.error as { errors: Record<string, string[]> }).errors.itemization![0]).toContain('4000 + 0 + 0 - 0 = 4000 is not its current_balance 5000');
    expect(await sentOf(off.id)).toBeNull();
  });

  test('a child alone gets a notice of its own; the list shows notices of the account and of its parent', async () => {
    const { parent, children } = await family();
    const own = (await send(children[0]!.id, { procedure_1006_42c: true })).data!.data;
    expect(own.debt_account_ids).toEqual([children[0]!.id]);
    expect(own.amount_due).toBe(112500);
    const covering = (await send(parent.id, { procedure_1006_42c: true })).data!.data;
    const listed = (await api.GET('/debt-accounts/{id}/validation-notices', { params: { path: { id: children[0]!.id } } })).data!;
    expect(listed.data.map((notice) => notice.id).sort()).toEqual([own.id, covering.id].sort());
    expect(listed.meta.total).toBe(2);
    const ofSecond = (await api.GET('/debt-accounts/{id}/validation-notices', { params: { path: { id: children[1]!.id } } })).data!;
    expect(ofSecond.data.map((notice) => notice.id)).toEqual([covering.id]);
  });
});

describe('the itemization on debt accounts', () => {
  test('is answered with its defaults, refused with a date after today or a negative amount, replaced and removed by PUT', async () => {
    const debtor = await newCustomer(api);
    const account = await newDebtAccount(api, debtor.id, { external_id: unique('ACC'), balance: 5000, itemization: { itemization_date: '2026-12-01', kind: 'judgment', amount: 5000 } });
    expect(account.itemization).toEqual({ itemization_date: '2026-12-01', kind: 'judgment', amount: 5000, interest: 0, fees: 0, payments_and_credits: 0, creditor: 'original_creditor' });

    const future = await api.POST('/debt-accounts', { body: { customer_id: debtor.id, location_id: 'LOC-LAKESIDE-01', balance: 100, itemization: { itemization_date: '2026-12-23', kind: 'judgment', amount: 100 } } });
    expect(future.response.status).toBe(422);
    expectFieldError(future.error, 'itemization.itemization_date');
    const negative = await api.POST('/debt-accounts', { body: { customer_id: debtor.id, location_id: 'LOC-LAKESIDE-01', balance: 100, itemization: { itemization_date: '2026-12-01', kind: 'judgment', amount: -1 } } });
    expect(negative.response.status).toBe(422);

    const updated = await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 5000, itemization: { itemization_date: '2026-11-01', kind: 'last_payment', amount: 6000, payments_and_credits: 1000, creditor: 'current_creditor' } } });
    expect(updated.data!.data.itemization).toMatchObject({ kind: 'last_payment', payments_and_credits: 1000, creditor: 'current_creditor' });
    const removed = await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 5000, itemization: null } });
    expect(removed.data!.data.itemization).toBeNull();
  });

  test('validation_notice_sent_at is no longer typed on an update (422); it is the service\'s', async () => {
    const debtor = await newCustomer(api);
    const account = await newDebtAccount(api, debtor.id, { external_id: unique('ACC'), balance: 5000 });
    const typed = await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 5000, validation_notice_sent_at: '2026-12-01' } as never });
    expect(typed.response.status).toBe(422);
    expect(await sentOf(account.id)).toBeNull();
  });
});

describe('POST /bulk with send_validation_notice', () => {
  test('each top-level account of a row that asks gets a notice (a parent covering its children); a row that does not ask gets none', async () => {
    const parentKey = unique('BULK-PARENT');
    const quietKey = unique('BULK-QUIET');
    const address = { line1: '77 Elm St', city: 'Austin', state: 'TX', postal_code: '78704' };
    const { data, response } = await api.POST('/bulk', {
      body: [
        {
          customer: { name: 'Rosa Delgado', email: `${unique('rosa')}@mail.debt-collection.example`, address },
          location: { name: 'Lakeside Medical Center', external_id: 'LOC-LAKESIDE-01' },
          send_validation_notice: true,
          parent_debt_accounts: [{ external_id: parentKey, balance: 0 }],
          debt_accounts: [
            { external_id: unique('BULK-CHILD'), parent_external_id: parentKey, balance: 30000, itemization: { itemization_date: '2026-05-01', kind: 'last_statement', amount: 30000 } },
            { external_id: unique('BULK-CHILD'), parent_external_id: parentKey, balance: 12000, itemization: { itemization_date: '2026-05-02', kind: 'transaction', amount: 11000, fees: 1000 } },
          ],
        },
        {
          customer: { name: 'Tom Reyes', email: `${unique('tom')}@mail.debt-collection.example`, address },
          location: { name: 'Lakeside Medical Center', external_id: 'LOC-LAKESIDE-01' },
          debt_accounts: [{ external_id: quietKey, balance: 5000, itemization: { itemization_date: '2026-05-01', kind: 'charge_off', amount: 5000 } }],
        },
      ],
    });
    expect(response.status).toBe(201);
    await eventually(async () => ((await api.GET('/bulk/{id}', { params: { path: { id: data!.data.bulk_id } } })).data!.data.status === 'completed' ? true : undefined), 'the import');
    const notices = await eventually(async () => {
      const listed = (await api.GET('/debt-accounts/{id}/validation-notices', { params: { path: { id: parentKey } } })).data!.data;
      return listed.length > 0 ? listed : undefined;
    }, 'the bulk notice');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ delivery: 'mail', amount_due: 42000, sent_on: '2026-12-22', validation_period_ends_on: ENDS_ON });
    expect(notices[0]!.debt_account_ids).toHaveLength(2);
    expect(await sentOf(parentKey)).toBe('2026-12-22');
    expect((await api.GET('/debt-accounts/{id}/validation-notices', { params: { path: { id: quietKey } } })).data!.data).toEqual([]);
    expect(await sentOf(quietKey)).toBeNull();
  });

  test('an itemization date after today refuses the request, naming the row and the account', async () => {
    const { response, error } = await api.POST('/bulk', {
      body: [
        {
          customer: { name: 'Rosa Delgado', email: `${unique('rosa')}@mail.debt-collection.example` },
          location: { name: 'Lakeside Medical Center', external_id: 'LOC-LAKESIDE-01' },
          debt_accounts: [{ balance: 100, itemization: { itemization_date: '2026-12-23', kind: 'charge_off', amount: 100 } }],
        },
      ],
    });
    expect(response.status).toBe(422);
    expectFieldError(error, '[0].debt_accounts[0].itemization.itemization_date');
  });
});

describe('the Portal', () => {
  test('the account page links to the notice, whose response choices open the dispute form pre-filled', async () => {
    const { debtor, parent } = await family();
    expect((await send(parent.id, { procedure_1006_42c: true })).response.status).toBe(201);
    const session = await newSession(api, { customer_id: debtor.id });
    const portal = await openPortal(app.config.portalUrl, session.portal_url);
    const get = async (path: string) => {
      const answer = await fetch(`${app.config.portalUrl}${path}`, { headers: { cookie: portal.cookie }, redirect: 'manual' });
      return { status: answer.status, html: await answer.text(), csp: answer.headers.get('content-security-policy') };
    };
    const page = await get(`/accounts/${parent.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`href="${new URL(app.config.portalUrl).pathname}/accounts/${parent.id}/validation-notice">Validation notice</a> (sent 2026-12-22)`);

    const notice = await get(`/accounts/${parent.id}/validation-notice`);
    expect(notice.status).toBe(200);
    expect(notice.csp).not.toContain('script-src');
    expect(notice.html).toContain('<strong>Call or write to us by </strong><strong>January 29, 2027</strong>');
    const links = [...notice.html.matchAll(/<a href="([^"]+\/dispute\?reason=[a-z_]+)">([^<]+)<\/a>/g)].map((m) => [m[1]!.replace(/^.*\?/, ''), m[2]]);
    expect(links).toEqual([
      ['reason=not_mine', 'This is not my debt.'],
      ['reason=wrong_amount', 'The amount is wrong.'],
      ['reason=other', 'Other (please describe on reverse or attach additional information).'],
      ['reason=original_creditor_requested', 'I want you to send me the name and address of the original creditor.'],
    ]);
    const form = await get(`/accounts/${parent.id}/dispute?reason=wrong_amount`);
    expect(form.status).toBe(200);
    expect(form.html).toMatch(/value="wrong_amount" checked/);
    expect(form.html).not.toMatch(/value="not_mine" checked/);
  });
});
