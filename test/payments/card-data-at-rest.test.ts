/**
 * Card and bank numbers at rest, as an attacker with a copy of the database (and the logs)
 * would look for them. Charges are made with known numbers by every path (the API inline and
 * with a saved method, the Portal API, the Portal's form, a scheduled charge, a plan's
 * instalment; with and without an Idempotency-Key, declined too); then every row of every table
 * of the test's database, pg-boss's schema included, is read as text and searched for the
 * numbers, and every value that looks like a digest (hex or base64 of 16 bytes or more) is
 * compared with unkeyed SHA-256, SHA-1 and MD5 digests of the candidates an attacker would try:
 * the number alone, number and security code, and the request bodies built from the known
 * values, in every canonical form the service ever hashed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { newDebtAccount, newCustomer, newSession, unique, CARD_YEAR } from '../support/fixtures';
import { openPortal } from '../support/portal-browser';
import { advanceSandbox, sandboxDayAfter, sandboxToday } from '../support/sandbox-clock';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

/** Valid (Luhn) test numbers the sandbox accepts, each used by one path; 4000…0002 is declined. */
const CARDS = {
  apiInline: { pan: '4242424242424242', cvv: '9731' },
  apiSaved: { pan: '5555555555554444', cvv: '8642' },
  portalApi: { pan: '4000056655665556', cvv: '7153' },
  portalForm: { pan: '5200828282828210', cvv: '6284' },
  scheduled: { pan: '4012888888881881', cvv: '5917' },
  plan: { pan: '4111111111111111', cvv: '4826' },
  declined: { pan: '4000000000000002', cvv: '3759' },
};
const BANKS = {
  apiInline: { routing: '011000015', account: '000918273645' },
  portalApi: { routing: '021000021', account: '000564738291' },
  portalForm: { routing: '026009593', account: '000192837465' },
};

/** Every body sent that held card or bank data, with the paths it was sent to. */
const sent: { method: string; path: string; body: unknown }[] = [];

const card = ({ pan, cvv }: { pan: string; cvv: string }) => ({
  card_holder: 'Maria Gonzalez',
  card_number: pan,
  card_expiration_month: 8,
  card_expiration_year: CARD_YEAR,
  card_security_code: cvv,
  card_postal_code: '78704',
});
const ach = ({ routing, account }: { routing: string; account: string }) => ({
  account_holder: 'Maria Gonzalez',
  account_type: 'checking' as const,
  routing_number: routing,
  account_number: account,
  account_zip: '78704',
  account_state: 'TX',
});

async function apiPost(path: '/charges' | '/customers/{id}/payment-methods', body: Record<string, unknown>, id?: string) {
  const key = randomUUID();
  const concrete = id ? path.replace('{id}', id) : path;
  sent.push({ method: 'POST', path: `/api/v1${concrete}`, body });
  const answer = await (path === '/charges'
    ? app.sandbox.POST('/charges', { body: body as never, headers: { 'Idempotency-Key': key } })
    : app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: id! } }, body: body as never, headers: { 'Idempotency-Key': key } }));
  // The retry is answered from what was kept: the stored answer and the request's fingerprint are read.
  const again = await (path === '/charges'
    ? app.sandbox.POST('/charges', { body: body as never, headers: { 'Idempotency-Key': key } })
    : app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: id! } }, body: body as never, headers: { 'Idempotency-Key': key } }));
  expect(again.response.status).toBe(answer.response.status);
  return answer;
}

async function payEveryWay(): Promise<void> {
  const customer = await newCustomer(app.sandbox, { external_id: unique('CUST') });
  const account = (balance = 500000) => newDebtAccount(app.sandbox, customer.id, { external_id: unique('ACC'), balance });
  const first = await account();

  // API, inline card and inline bank account (one of them saved), and a declined card.
  expect((await apiPost('/charges', { debt_account_id: first.id, amount: 1000, card: card(CARDS.apiInline) })).response.status).toBe(201);
  expect((await apiPost('/charges', { debt_account_id: first.id, amount: 1000, ach: ach(BANKS.apiInline), save_payment_method: true })).response.status).toBe(201);
  expect((await apiPost('/charges', { debt_account_id: first.id, amount: 1000, card: card(CARDS.declined) })).response.status).toBe(400);

  // API, a saved card.
  const saved = await apiPost('/customers/{id}/payment-methods', { card: card(CARDS.apiSaved) }, customer.id);
  expect(saved.response.status).toBe(201);
  const methodId = (saved.data as { data: { id: string } }).data.id;
  expect((await apiPost('/charges', { debt_account_id: first.id, amount: 1000, payment_method_id: methodId })).response.status).toBe(201);

  // A scheduled charge with a new card (saved for its day), carried out by moving the clock.
  const later = await sandboxDayAfter(app.sandbox, 1);
  expect((await apiPost('/charges', { debt_account_id: first.id, amount: 1000, card: card(CARDS.scheduled), save_payment_method: true, scheduled_at: later })).response.status).toBe(201);

  // A payment plan on a card saved for it; its first instalment charged on its day.
  const planAccount = await account(8000);
  const planCard = await apiPost('/customers/{id}/payment-methods', { card: card(CARDS.plan) }, customer.id);
  const plan = await app.sandbox.POST('/payment-plans', {
    body: { debt_account_id: planAccount.id, payment_method_id: (planCard.data as { data: { id: string } }).data.id, frequency: 'weekly', start_date: await sandboxToday(app.sandbox), amount: 2000 },
  });
  expect(plan.response.status).toBe(201);
  await advanceSandbox(app.sandbox, 2);
  expect(await app.db('charges').where({ payment_plan_id: plan.data!.data.id, status: 'succeeded' }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '1' }]);
  expect(await app.db('charges').where({ scheduled_at: later, status: 'succeeded' }).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: '1' }]);

  // The Portal API: a card (saved) and a bank account, each with an Idempotency-Key, each sent twice.
  const portalAccount = await account();
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: portalAccount.id });
  const browser = await openPortal(app.config.portalUrl, session.portal_url);
  const portalPath = `/api/accounts/${portalAccount.id}/payments`;
  for (const body of [
    { amount: 1500, card: card(CARDS.portalApi), save_payment_method: true, accept_policy: true },
    { amount: 1500, ach: ach(BANKS.portalApi), accept_policy: true },
  ]) {
    const key = randomUUID();
    sent.push({ method: 'POST', path: portalPath, body });
    // The charge the Portal asks the payments service for: what its key's fingerprint is taken of.
    const { accept_policy: _policy, ...asked } = body;
    sent.push({ method: 'POST', path: portalPath, body: { debt_account_id: portalAccount.id, save_payment_method: false, ...asked } });
    const paid = await browser.call('POST', `/accounts/${portalAccount.id}/payments`, body, { 'idempotency-key': key });
    expect(paid.status).toBe(201);
    expect((await browser.call('POST', `/accounts/${portalAccount.id}/payments`, body, { 'idempotency-key': key })).body.data.charge.id).toBe(paid.body.data.charge.id);
  }

  // The Portal's form: a new card, then a new bank account, as a person fills them in.
  const formPath = `/accounts/${portalAccount.id}/pay`;
  const { pan, cvv } = CARDS.portalForm;
  const cardForm = { choice: 'partial', amount: '12.50', method: 'card', card_holder: 'Maria Gonzalez', card_number: pan, card_exp_month: '08', card_exp_year: String(CARD_YEAR), card_cvc: cvv, card_zip: '78704', save: 'yes' };
  const bankForm = { choice: 'partial', amount: '12.50', method: 'ach', ach_holder: 'Maria Gonzalez', ach_type: 'checking', ach_routing: BANKS.portalForm.routing, ach_account: BANKS.portalForm.account, ach_zip: '78704', ach_state: 'TX' };
  const asked = [
    { debt_account_id: portalAccount.id, amount: 1250, card: { ...card(CARDS.portalForm), card_expiration_month: 8 }, save_payment_method: true },
    { debt_account_id: portalAccount.id, amount: 1250, ach: ach(BANKS.portalForm), save_payment_method: false },
  ];
  for (const body of asked) sent.push({ method: 'POST', path: formPath, body });
  for (const form of [cardForm, bankForm]) {
    sent.push({ method: 'POST', path: formPath, body: form });
    const posted = await browser.payByForm(portalAccount.id, form);
    expect(posted.status).toBe(303);
    expect(posted.location).toContain('/receipts/');
  }
}

// ---- what an attacker does with a copy of the database

type Row = { where: string; text: string };

/** Every row of every table of the database (pg-boss's schema too), as text. */
async function everyRow(): Promise<Row[]> {
  const { rows: tables } = await app.db.raw<{ rows: { schema: string; name: string }[] }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  expect(tables.map((table) => `${table.schema}.${table.name}`)).toEqual(expect.arrayContaining(['public.charges', 'public.idempotency_keys', 'pgboss.job']));
  const rows: Row[] = [];
  for (const { schema, name } of tables) {
    const { rows: texts } = await app.db.raw<{ rows: { text: string }[] }>(`SELECT t::text AS text FROM "${schema}"."${name}" t`);
    for (const { text } of texts) rows.push({ where: `${schema}.${name}`, text });
  }
  return rows;
}

const digests = (input: string): string[] => ['sha256', 'sha1', 'md5'].map((algorithm) => createHash(algorithm).update(input, 'utf8').digest('hex'));

/** The canonical JSON the service hashed request bodies in (sorted keys). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What a brute force tries, built from the known values: each candidate's unkeyed digests, and what it stands for. */
function candidates(): Map<string, string> {
  const tried = new Map<string, string>();
  const add = (input: string, what: string) => digests(input).forEach((digest) => tried.set(digest, what));
  for (const [path, { pan, cvv }] of Object.entries(CARDS)) {
    add(pan, `the card number of ${path}`);
    add(cvv, `the security code of ${path}`);
    for (const joined of [`${pan}${cvv}`, `${pan}:${cvv}`, `${pan}|${cvv}`, `${pan} ${cvv}`]) add(joined, `card number and code of ${path}`);
  }
  for (const [path, { routing, account }] of Object.entries(BANKS)) {
    add(account, `the account number of ${path}`);
    add(routing, `the routing number of ${path}`);
    add(`${routing}${account}`, `the bank numbers of ${path}`);
  }
  const base = new URL(app.config.portalUrl).pathname;
  for (const { method, path, body } of sent) {
    for (const form of [canonical(body), JSON.stringify(body), new URLSearchParams(body as Record<string, string>).toString()]) {
      add(form, `the body sent to ${path}`);
      for (const prefix of [path, `${base}${path}`]) add(`${method} ${prefix}\n${form}`, `the request ${method} ${prefix}`);
    }
  }
  return tried;
}

/** Every value that may be a digest: hex of 16 bytes or more, and base64 of as much, as lower-case hex. */
function digestLike(text: string): string[] {
  const found = new Set<string>();
  for (const hex of text.match(/[0-9a-fA-F]{32,}/g) ?? []) {
    found.add(hex.toLowerCase());
    // A longer run may hold a digest inside it (a prefix, a bytea's \x): each aligned window.
    for (const size of [32, 40, 64]) for (let at = 0; at + size <= hex.length; at += 2) found.add(hex.slice(at, at + size).toLowerCase());
  }
  for (const b64 of text.match(/[A-Za-z0-9+/_-]{22,}={0,2}/g) ?? []) {
    const bytes = Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length >= 16) found.add(bytes.toString('hex'));
  }
  return [...found];
}

function bruteForce(rows: Row[], tried: Map<string, string>): string[] {
  const recovered: string[] = [];
  for (const { where, text } of rows) {
    for (const value of digestLike(text)) {
      const what = tried.get(value);
      if (what) recovered.push(`${where}: ${what}`);
    }
  }
  return recovered;
}

function numbersIn(rows: Row[]): string[] {
  const numbers = [...Object.values(CARDS).map((c) => c.pan), ...Object.values(BANKS).flatMap((b) => [b.account, b.routing])];
  const found: string[] = [];
  for (const { where, text } of rows) {
    for (const number of numbers) if (text.includes(number)) found.push(`${where}: ${number}`);
    // A security code is too short to search for as such: a body or form kept whole names it.
    if (/card_security_code|card_cvc|security.code/i.test(text)) found.push(`${where}: a security code field`);
  }
  return found;
}

test('the brute force finds an unkeyed SHA-256 of a charge body (as request_hash kept it), so a clean result means something', () => {
  const body = { debt_account_id: randomUUID(), amount: 1000, card: card(CARDS.apiInline) };
  sent.push({ method: 'POST', path: '/api/v1/charges', body });
  const unkeyed = createHash('sha256').update(`POST /api/v1/charges\n${canonical(body)}`).digest('hex');
  expect(bruteForce([{ where: 'idempotency_keys', text: `(org,sandbox,key,POST,/api/v1/charges,${unkeyed},done)` }], candidates())).toEqual([
    'idempotency_keys: the request POST /api/v1/charges',
  ]);
  expect(bruteForce([{ where: 'a bytea', text: `\\x${createHash('sha1').update(CARDS.plan.pan).digest('hex')}` }], candidates())).toEqual(['a bytea: the card number of plan']);
  sent.pop();
});

test('after charges by every path, no table, no job and no log line holds a number, and no digest gives one back', async () => {
  await payEveryWay();
  const rows = await everyRow();
  expect(rows.filter((row) => row.where === 'public.idempotency_keys').length).toBeGreaterThanOrEqual(6);
  expect(rows.filter((row) => row.where === 'public.charges').length).toBeGreaterThanOrEqual(10);
  expect(rows.filter((row) => row.where.startsWith('pgboss.')).length).toBeGreaterThan(0);
  expect(numbersIn(rows)).toEqual([]);
  expect(bruteForce(rows, candidates())).toEqual([]);
  const logs = app.logs.map((line) => ({ where: 'log', text: line }));
  expect(logs.length).toBeGreaterThan(0);
  expect(numbersIn(logs)).toEqual([]);
  expect(bruteForce(logs, candidates())).toEqual([]);
}, 120_000);
