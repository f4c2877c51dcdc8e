/**
 * The five dispute events as a receiver gets them over HTTP from a delivery worker, each body
 * checked against the document's webhook schema: `debt-account-dispute.create` and `.update`
 * (an agent's dispute and its move), `customer.dispute.created` (a customer's Portal form, with
 * a file), and the guest's `guest.dispute.registration.verification.failed` / `.success` and
 * `guest.dispute.created`; with them the account's `debt-account.update` carrying the dispute.
 * The Portal is driven over plain HTTP as a browser posts its forms (cookie, `_csrf`, multipart).
 */
import type { Schemas } from '../../client';
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, newSession, unique, uniquePhone } from '../support/fixtures';
import { startReceiver, startTestWorker, type Receiver, deliveredData, type DeliveredData } from '../support/webhooks';
import { openPortal } from '../support/portal-browser';
import { organizationQuery } from '../portal-logins/portal-guest';
import type { WebhookWorker } from '../../server/webhooks/delivery-worker';

const EVENTS: Schemas['EventName'][] = [
  'debt-account-dispute.create',
  'debt-account-dispute.update',
  'customer.dispute.created',
  'guest.dispute.registration.verification.success',
  'guest.dispute.registration.verification.failed',
  'guest.dispute.created',
  'debt-account.update',
];

let app: TestApp;
let worker: WebhookWorker;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  worker = await startTestWorker(app);
  receiver = await startReceiver();
  const { response } = await app.sandbox.POST('/webhooks', { body: { url: receiver.url, events: EVENTS, secret: 'dispute_events_secret_123' } });
  expect(response.status).toBe(201);
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await app?.stop();
});

type Data = DeliveredData;

const delivered = (event: string, match: (data: Data) => boolean): Promise<Data> => deliveredData(receiver, event, match);

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');
const portal = () => `${app.origin}/portal`;

/** The dispute form as a browser sends it: `_csrf` first, then the fields, then the file. */
function disputeForm(csrf: string, reason: string): FormData {
  const form = new FormData();
  form.append('_csrf', csrf);
  form.append('reason', reason);
  form.append('details', 'Sent from the Portal.');
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'letter.pdf');
  return form;
}

const cookiesOf = (response: Response, known = '') =>
  [known, ...response.headers.getSetCookie().map((line) => line.split(';')[0]!)].filter(Boolean).join('; ');

test('an agent\'s dispute and its move: debt-account-dispute.create, .update, and debt-account.update carrying it', async () => {
  const { account } = await customerWithAccount(app.sandbox, {}, { balance: 9_000 });
  const { data } = await app.sandbox.POST('/debt-accounts/{id}/disputes', { params: { path: { id: account.id } }, body: { reason: 'already_paid', in_writing: false } });
  const id = data!.data.id;
  expect(await delivered('debt-account-dispute.create', (d) => d.id === id)).toMatchObject({ status: 'pending', reason: 'already_paid', debt_account: { id: account.id } });
  const held = await delivered('debt-account.update', (d) => d.id === account.id && d.active_dispute?.id === id);
  expect(held.disputes.map((d: Data) => d.id)).toEqual([id]);
  await app.sandbox.PUT('/disputes/{id}', { params: { path: { id } }, body: { status: 'under_review' } });
  expect(await delivered('debt-account-dispute.update', (d) => d.id === id)).toMatchObject({ status: 'under_review' });
});

test('a customer\'s Portal form with a file: customer.dispute.created, and the dispute\'s create with its file', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 12_500, external_account_number: unique('AN') });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_detail' });
  const browser = await openPortal(portal(), session.portal_url);
  const posted = await fetch(`${portal()}/accounts/${account.id}/dispute`, { method: 'POST', body: disputeForm(browser.csrf, 'wrong_amount'), headers: { cookie: browser.cookie }, redirect: 'manual' });
  expect(posted.status).toBe(303);
  const tracked = await delivered('customer.dispute.created', (d) => d.trackables?.debt_account?.uuid === account.id);
  expect(tracked.trackables.customer.uuid).toBe(customer.id);
  const created = await delivered('debt-account-dispute.create', (d) => d.debt_account.id === account.id);
  expect(created).toMatchObject({ reason: 'wrong_amount', has_documents: true, files: [{ name: 'letter.pdf' }], customer: { id: customer.id } });
});

test('a guest: verification failed, then succeeded, then guest.dispute.created for the account chosen', async () => {
  const phone = uniquePhone('214');
  const { customer, account } = await customerWithAccount(app.sandbox, { ssn_last4: '3081', phone }, { balance: 4_200, external_account_number: unique('AN') });
  const entry = await fetch(`${portal()}/dispute-a-debt?${organizationQuery(app)}`);
  expect(entry.status).toBe(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await entry.text())![1]!;
  let cookie = cookiesOf(entry);
  const verify = (ssn: string) =>
    fetch(`${portal()}/dispute-a-debt`, { method: 'POST', body: new URLSearchParams({ _csrf: csrf, phone, ssn_last4: ssn }), headers: { cookie }, redirect: 'manual' });

  expect((await verify('0000')).status).toBe(422);
  await delivered('guest.dispute.registration.verification.failed', () => true);
  const passed = await verify('3081');
  expect(passed.status).toBe(303);
  expect(passed.headers.get('location')).toBe('/portal/dispute-a-debt/accounts');
  cookie = cookiesOf(passed, cookie);
  expect((await delivered('guest.dispute.registration.verification.success', (d) => d.trackables?.customer?.uuid === customer.id)).trackables.debt_account.uuid).toBe(account.id);

  const filed = await fetch(`${portal()}/dispute-a-debt/accounts/${account.id}`, { method: 'POST', body: disputeForm(csrf, 'not_mine'), headers: { cookie }, redirect: 'manual' });
  expect(filed.status).toBe(303);
  await delivered('guest.dispute.created', (d) => d.trackables?.debt_account?.uuid === account.id);
  expect(await delivered('debt-account-dispute.create', (d) => d.debt_account.id === account.id)).toMatchObject({ reason: 'not_mine', username: null, has_documents: true });
});
