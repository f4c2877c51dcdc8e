/**
 * The payment terms through every door: each case is sent, with the same intent on a fresh
 * account, to the API (`POST /charges` through the generated client), the Portal API
 * (`POST /api/accounts/{id}/payments` with the browser session's cookie and CSRF token) and the
 * Portal's form (an HTML form post, as a browser without JavaScript sends it), and each must
 * give the same verdict: the payment made, or refused with the same reason and nothing charged.
 */
import { randomBytes } from 'node:crypto';
import type { Schemas } from '../../client';
import { addDays } from '../../server/kernel/dates';
import { WINDOWS, type Channel } from '../../server/payment-terms/payment-terms';
import { startTestApp, type TestApp } from '../support/test-app';
import { CARD_YEAR, customerWithAccount, newSession, testCard, unique } from '../support/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Door = 'api' | 'portal api' | 'portal form';
const DOORS: Door[] = ['api', 'portal api', 'portal form'];
const channelOf = (door: Door): Channel => (door === 'api' ? 'api' : 'portal');

interface Case {
  name: string;
  account: Partial<Schemas['DebtAccountCreate']> & { balance: number };
  /** Cents, or from the balance. */
  amount: number | ((balance: number) => number);
  way: 'card' | 'saved' | 'saved and card';
  /** Days after today for a later-day payment; 'beyond' is the day after the door's window, 'edge' its last day. */
  later?: 'beyond' | 'edge';
  /** A new card's number other than 4242…. */
  cardNumber?: string;
  /** undefined: the payment is made; else the reason it is refused. */
  refused?: RegExp;
}

const CASES: Case[] = [
  { name: 'an active account, part of the balance', account: { balance: 10_000 }, amount: 2_500, way: 'card' },
  { name: 'a closed account', account: { balance: 10_000, status: 'closed' }, amount: 2_500, way: 'card', refused: /the account is closed and takes no payments/i },
  // The Portal hides an archived account altogether: not found there, not payable in the API.
  { name: 'an archived account', account: { balance: 10_000, status: 'archived' }, amount: 2_500, way: 'card', refused: /archived and takes no payments|could not find this account/i },
  { name: 'a paid-off account', account: { balance: 10_000, current_balance: 0, status: 'paid_off' }, amount: 100, way: 'card', refused: /the account is paid off/i },
  { name: 'below the minimum rule', account: { balance: 10_000, rules: { min_payment_amount: 2_500 } }, amount: 2_499, way: 'card', refused: /at least the minimum payment \(\$25\.00\)/i },
  { name: 'at the minimum rule', account: { balance: 10_000, rules: { min_payment_amount: 2_500 } }, amount: 2_500, way: 'card' },
  { name: 'below the default minimum ($1.00)', account: { balance: 10_000 }, amount: 99, way: 'card', refused: /at least the minimum payment \(\$1\.00\)/i },
  { name: 'at the default minimum', account: { balance: 10_000 }, amount: 100, way: 'card' },
  { name: 'above the balance', account: { balance: 10_000 }, amount: (balance) => balance + 1, way: 'card', refused: /at most the current balance \(\$100\.00\)/i },
  { name: 'the exact balance under the minimum', account: { balance: 1_500, rules: { min_payment_amount: 2_500 } }, amount: (balance) => balance, way: 'card' },
  { name: 'billing_type without partial-payment, part of the balance', account: { balance: 10_000, billing_type: ['full-amount-payment'] }, amount: 5_000, way: 'card', refused: /takes no partial payment/i },
  { name: 'billing_type without partial-payment, the whole balance', account: { balance: 10_000, billing_type: ['full-amount-payment'] }, amount: (balance) => balance, way: 'card' },
  { name: 'billing_type with partial-payment only, the whole balance', account: { balance: 10_000, billing_type: ['partial-payment'] }, amount: (balance) => balance, way: 'card' },
  { name: 'billing_type payment-plan only', account: { balance: 10_000, billing_type: ['payment-plan'] }, amount: (balance) => balance, way: 'card', refused: /offers only a payment plan/i },
  { name: 'a saved card', account: { balance: 10_000 }, amount: 2_500, way: 'saved' },
  { name: 'a saved card and a new card: two ways to pay', account: { balance: 10_000 }, amount: 2_500, way: 'saved and card', refused: /one way to pay/i },
  // The document's CardInput (12 to 19 digits), read by the validator and, for the form, by the Portal.
  { name: 'a new card number of 11 digits', account: { balance: 10_000 }, amount: 2_500, way: 'card', cardNumber: '42424242424', refused: /12,19|12 to 19 digits/ },
  { name: 'a later day on the last day of the window', account: { balance: 10_000 }, amount: 2_500, way: 'saved', later: 'edge' },
  { name: 'a later day beyond the window', account: { balance: 10_000 }, amount: 2_500, way: 'saved', later: 'beyond', refused: /must be within \d+ days from today/i },
];

interface Verdict {
  made: boolean;
  message: string;
}

interface Visit {
  cookie: string;
  csrf: string;
}

async function signIn(portalUrl: string): Promise<Visit> {
  const entered = await fetch(portalUrl, { redirect: 'manual' });
  const cookie = entered.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
  const session = await fetch(`${app.config.portalUrl}/api/session`, { headers: { cookie } });
  return { cookie, csrf: session.headers.get('x-csrf-token')! };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

async function attempt(door: Door, test: Case): Promise<{ verdict: Verdict; accountId: string; balance: number }> {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { external_account_number: unique('AN'), ...test.account });
  const balance = account.current_balance;
  const amount = typeof test.amount === 'function' ? test.amount(balance) : test.amount;
  const saved = await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard('5555555555554444') } });
  const methodId = saved.data!.data.id;
  const today = app.clock.now().toISOString().slice(0, 10);
  const window = WINDOWS[channelOf(door)].laterDayWithinDays;
  const day = test.later === 'edge' ? addDays(today, window) : test.later === 'beyond' ? addDays(today, window + 1) : undefined;
  const card = testCard(test.cardNumber);
  const way = test.way === 'card' ? { card } : test.way === 'saved' ? { payment_method_id: methodId } : { payment_method_id: methodId, card };

  if (door === 'api') {
    const { response, error } = await app.sandbox.POST('/charges', { body: { debt_account_id: account.id, amount, ...way, ...(day ? { scheduled_at: day } : {}) } });
    const errors = (error as { errors?: Record<string, string[]> } | undefined)?.errors ?? {};
    return { verdict: { made: response.status === 201, message: Object.values(errors).flat().join(' ') }, accountId: account.id, balance };
  }
  const visit = await signIn((await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id })).portal_url);
  if (door === 'portal api') {
    const response = await fetch(`${app.config.portalUrl}/api/accounts/${account.id}/payments`, {
      method: 'POST',
      headers: { cookie: visit.cookie, 'x-csrf-token': visit.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ amount, ...way, accept_policy: true, ...(day ? { scheduled_at: day } : {}) }),
    });
    const body = (await response.json()) as { error?: string; errors?: Record<string, string[]> };
    return { verdict: { made: response.status === 201, message: [body.error ?? '', ...Object.values(body.errors ?? {}).flat()].join(' ') }, accountId: account.id, balance };
  }
  const fields: Record<string, string> = {
    _csrf: visit.csrf,
    payment_key: randomBytes(16).toString('hex'),
    choice: 'partial',
    amount: (amount / 100).toFixed(2),
    policy: 'accepted',
    method: test.way === 'card' ? 'card' : `saved:${methodId}`,
    ...(test.way === 'saved' ? {} : { card_holder: card.card_holder, card_number: card.card_number, card_exp_month: '08', card_exp_year: String(CARD_YEAR), card_cvc: '123' }),
    ...(day ? { pay_on: day } : {}),
  };
  const response = await fetch(`${app.config.portalUrl}/accounts/${account.id}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: visit.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const made = response.status === 303 && (response.headers.get('location') ?? '').includes('/receipts/');
  return { verdict: { made, message: made ? '' : text(await response.text()) }, accountId: account.id, balance };
}

describe.each(CASES)('$name', (given) => {
  test.each(DOORS)(`through the %s: ${given.refused ? 'refused, nothing charged' : 'the payment is made'}`, async (door) => {
    const { verdict, accountId, balance } = await attempt(door, given);
    const charges = await app.sandbox.GET('/charges', { params: { query: { debt_account_id: accountId } } });
    const account = await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: accountId } } });
    // A payment's tracking events commit with it: none for a payment refused.
    const tracked: string[] = await app.db('portal_activity').where({ debt_account_id: accountId }).whereLike('event', '%checkout.%').pluck('event');
    if (given.refused) {
      expect(verdict).toEqual({ made: false, message: expect.stringMatching(given.refused) });
      expect(charges.data!.data).toEqual([]);
      expect(account.data!.data.current_balance).toBe(balance);
      expect(tracked).toEqual([]);
    } else {
      if (door !== 'api') expect(tracked).toEqual(expect.arrayContaining(['customer.checkout.policy.accepted', expect.stringMatching(/^customer\.checkout\.one-time-payment\..*success$/)]));
      expect(verdict).toEqual({ made: true, message: '' });
      expect(charges.data!.data).toHaveLength(1);
      expect(charges.data!.data[0]!.status).toBe(given.later ? 'scheduled' : 'succeeded');
      const amount = charges.data!.data[0]!.amount;
      expect(account.data!.data.current_balance).toBe(given.later ? balance : balance - amount);
    }
  });
});

interface PlanCase {
  name: string;
  account: Partial<Schemas['DebtAccountCreate']> & { balance: number };
  amount: number;
  frequency: Schemas['PaymentPlanFrequency'];
  /** Days after today of the first payment; 'beyond' is the day after the door's window. */
  start: number | 'beyond';
  refused?: RegExp;
}

const PLAN_CASES: PlanCase[] = [
  { name: 'a plan on an account that offers one', account: { balance: 40_000 }, amount: 10_000, frequency: 'monthly', start: 0 },
  { name: 'a plan when billing_type leaves out payment-plan', account: { balance: 40_000, billing_type: ['full-amount-payment', 'partial-payment'] }, amount: 10_000, frequency: 'monthly', start: 0, refused: /does not offer payment-plan/i },
  { name: 'a plan on a closed account', account: { balance: 40_000, status: 'closed' }, amount: 10_000, frequency: 'monthly', start: 0, refused: /the account is closed and takes no payments/i },
  { name: 'a plan below the minimum rule', account: { balance: 40_000, rules: { min_payment_amount: 5_000 } }, amount: 4_999, frequency: 'weekly', start: 0, refused: /at least the minimum payment \(\$50\.00\)/i },
  { name: 'a plan starting beyond the window', account: { balance: 40_000 }, amount: 10_000, frequency: 'monthly', start: 'beyond', refused: /must be within \d+ days from today/i },
];

async function attemptPlan(door: Door, given: PlanCase): Promise<{ verdict: Verdict; accountId: string }> {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { external_account_number: unique('AN'), ...given.account });
  const saved = await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard('5555555555554444') } });
  const methodId = saved.data!.data.id;
  const today = app.clock.now().toISOString().slice(0, 10);
  const start = addDays(today, given.start === 'beyond' ? WINDOWS[channelOf(door)].planStartWithinDays + 1 : given.start);
  const terms = { frequency: given.frequency, start_date: start, amount: given.amount, payment_method_id: methodId };
  if (door === 'api') {
    const { response, error } = await app.sandbox.POST('/payment-plans', { body: { debt_account_id: account.id, ...terms } });
    const errors = (error as { errors?: Record<string, string[]> } | undefined)?.errors ?? {};
    return { verdict: { made: response.status === 201, message: Object.values(errors).flat().join(' ') }, accountId: account.id };
  }
  const visit = await signIn((await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id })).portal_url);
  if (door === 'portal api') {
    const response = await fetch(`${app.config.portalUrl}/api/accounts/${account.id}/payment-plan`, {
      method: 'POST',
      headers: { cookie: visit.cookie, 'x-csrf-token': visit.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ ...terms, accept_policy: true }),
    });
    const body = (await response.json()) as { error?: string; errors?: Record<string, string[]> };
    return { verdict: { made: response.status === 201, message: [body.error ?? '', ...Object.values(body.errors ?? {}).flat()].join(' ') }, accountId: account.id };
  }
  const fields = { _csrf: visit.csrf, frequency: given.frequency, start_date: start, plan_amount: (given.amount / 100).toFixed(2), method: `saved:${methodId}`, policy: 'accepted' };
  const response = await fetch(`${app.config.portalUrl}/accounts/${account.id}/plan`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: visit.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const made = response.status === 303 && (response.headers.get('location') ?? '').endsWith('?plan=created');
  return { verdict: { made, message: made ? '' : text(await response.text()) }, accountId: account.id };
}

describe.each(PLAN_CASES)('$name', (given) => {
  test.each(DOORS)(`through the %s: ${given.refused ? 'refused, no plan' : 'the plan is set up'}`, async (door) => {
    const { verdict, accountId } = await attemptPlan(door, given);
    const plans = await app.sandbox.GET('/payment-plans', { params: { query: { debt_account_id: accountId } } });
    if (given.refused) {
      expect(verdict).toEqual({ made: false, message: expect.stringMatching(given.refused) });
      expect(plans.data!.data).toEqual([]);
    } else {
      expect(verdict).toEqual({ made: true, message: '' });
      expect(plans.data!.data).toEqual([expect.objectContaining({ status: 'active', amount: given.amount, frequency: given.frequency })]);
    }
  });
});
