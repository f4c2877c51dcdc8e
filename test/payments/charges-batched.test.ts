/**
 * The API's charges whose gateway answers arrive together are recorded together (group commit,
 * server/payments/charge-answers.ts), and an integrator cannot tell: each request gets its own
 * charge's outcome, each charge its own events once, every balance is the original less what
 * succeeded, and one charge's `debt-account.update` shows the balance as that charge left it,
 * also when another charge of the same family was answered at the same moment.
 */
import { randomUUID } from 'node:crypto';
import { accountOf, accountWithCard, newCustomer, newDebtAccount, testCard, unique, type ErrorBody } from '../support/fixtures';
import { restoreGatewayAfterEach, sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { recordInBatch, roundsOf } from '../../server/payments/charge-answers';
import { recoverCharge } from '../../server/payments/charge-recovery';
import type { Tenant } from '../../server/kernel/tenant';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';

let app: TestApp;
let tenant: Tenant;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  tenant = sandboxTenantOf(app);
});
restoreGatewayAfterEach(() => app);
afterAll(async () => app?.stop());

const charge = (body: Record<string, unknown>) =>
  app.sandbox.POST('/charges', { body: body as never, params: { header: { 'Idempotency-Key': randomUUID() } } as never });

test('a batch is cut into rounds with one answer per account family each, in the order they came', () => {
  const [a, b] = [{ organizationId: 'org-a', environment: 'sandbox' as const, tokenHash: '' }, { organizationId: 'org-b', environment: 'sandbox' as const, tokenHash: '' }];
  const items = [
    { tenant: a, head: 'h1', n: 1 },
    { tenant: a, head: 'h2', n: 2 },
    { tenant: a, head: 'h1', n: 3 },
    { tenant: b, head: 'h1', n: 4 },
    { tenant: a, head: 'h1', n: 5 },
    { tenant: a, head: 'h3', n: 6 },
  ];
  expect(roundsOf(items).map((round) => round.map((item) => item.n))).toEqual([[1, 2, 4, 6], [3], [5]]);
  expect(roundsOf([])).toEqual([]);
});

test('answers recorded together: each its own outcome, balances and events; two of one family each show the balance it left', async () => {
  // Reserved charges whose answers were lost (202 processing), answered here all at once.
  app.config.testSandboxLoseAnswerCents = 1313;
  app.config.gatewayAnswerWaitMs = 100;
  const { account: alone, methodId: aloneMethod } = await accountWithCard(app.sandbox, 10_000);
  const { account: declined, methodId: declinedMethod } = await accountWithCard(app.sandbox, 10_000);
  const customer = await newCustomer(app.sandbox);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(app.sandbox, customer.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(app.sandbox, customer.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(app.sandbox, customer.id, { balance: 5000, parent_external_id: parentKey });
  const reserve = async (body: Record<string, unknown>) => {
    const answer = await charge({ amount: 1313, ...body });
    expect(answer.response.status).toBe(202);
    return answer.data!.data;
  };
  const onAlone = await reserve({ debt_account_id: alone.id, payment_method_id: aloneMethod });
  const onOlder = await reserve({ debt_account_id: older.id, card: testCard() });
  const onYounger = await reserve({ debt_account_id: younger.id, card: testCard() });
  const onDeclined = await reserve({ debt_account_id: declined.id, payment_method_id: declinedMethod });

  const now = new Date();
  const heads = { [onAlone.id]: alone.id, [onOlder.id]: parent.id, [onYounger.id]: parent.id, [onDeclined.id]: declined.id };
  const answered = (id: string, answer: Parameters<typeof recordInBatch>[4]) => recordInBatch(app.deps, tenant, heads[id] ?? id, id, answer, now);
  const [a, o, y, d, unknown] = await Promise.all([
    answered(onAlone.id, { status: 'succeeded', reference: `ref-${randomUUID()}` }),
    answered(onOlder.id, { status: 'succeeded', reference: `ref-${randomUUID()}` }),
    answered(onYounger.id, { status: 'succeeded', reference: `ref-${randomUUID()}` }),
    answered(onDeclined.id, { status: 'failed', reference: `ref-${randomUUID()}`, code: 'card_declined', message: 'The card was declined.' }),
    answered(randomUUID(), { status: 'succeeded', reference: `ref-${randomUUID()}` }),
  ]);
  expect([a, o, y].map((outcome) => [outcome!.charge.id, outcome!.charge.status, outcome!.declined])).toEqual([
    [onAlone.id, 'succeeded', undefined],
    [onOlder.id, 'succeeded', undefined],
    [onYounger.id, 'succeeded', undefined],
  ]);
  expect(d!.charge).toMatchObject({ id: onDeclined.id, status: 'failed', error_code: 'card_declined' });
  expect(d!.declined?.errorCode).toBe('card_declined');
  expect(unknown).toBeUndefined();

  expect((await accountOf(app.sandbox, alone.id)).current_balance).toBe(10_000 - 1313);
  expect((await accountOf(app.sandbox, declined.id)).current_balance).toBe(10_000);
  expect([(await accountOf(app.sandbox, older.id)).current_balance, (await accountOf(app.sandbox, younger.id)).current_balance, (await accountOf(app.sandbox, parent.id)).current_balance]).toEqual([
    3000 - 1313,
    5000 - 1313,
    8000 - 2626,
  ]);
  for (const id of [onAlone.id, onOlder.id, onYounger.id]) expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(1);
  expect(await outboxEvents(app, 'charge.failed', onDeclined.id)).toHaveLength(1);
  // The parent's updates: as the older child's charge left it, then as the younger's did.
  const parentUpdates = await outboxEvents(app, 'debt-account.update', parent.id);
  expect(parentUpdates.slice(-2).map((data) => data.current_balance)).toEqual([8000 - 1313, 8000 - 2626]);
  // Recorded once: the same answer again changes nothing.
  const again = await answered(onAlone.id, { status: 'succeeded', reference: 'another' });
  expect(again!.charge).toMatchObject({ id: onAlone.id, status: 'succeeded', gateway_reference: a!.charge.gateway_reference });
  expect((await accountOf(app.sandbox, alone.id)).current_balance).toBe(10_000 - 1313);
  expect(await outboxEvents(app, 'charge.succeeded', onAlone.id)).toHaveLength(1);
});

test('many charges at once through POST /charges: each request answers its own charge, and every balance is the original less what succeeded', async () => {
  app.config.sandboxGatewayLatencyMs = 150;
  const accounts = await Promise.all([0, 1, 2, 3].map(() => accountWithCard(app.sandbox, 10_000)));
  const { account: declining, methodId: decliningMethod } = await accountWithCard(app.sandbox, 10_000, {}, '4000000000000002');
  const requests = [
    ...accounts.flatMap(({ account, methodId }, index) => [
      { amount: 100 + index, debt_account_id: account.id, payment_method_id: methodId },
      { amount: 200 + index, debt_account_id: account.id, payment_method_id: methodId },
    ]),
    { amount: 999, debt_account_id: declining.id, payment_method_id: decliningMethod },
  ];
  const answers = await Promise.all(requests.map((body) => charge(body)));
  answers.forEach((answer, index) => {
    const asked = requests[index]!;
    if (asked.debt_account_id === declining.id) {
      expect(answer.response.status).toBe(400);
      expect((answer.error as ErrorBody).errorCode).toBe('card_declined');
      return;
    }
    expect(answer.response.status).toBe(201);
    expect(answer.data!.data).toMatchObject({ status: 'succeeded', amount: asked.amount, debt_account_id: asked.debt_account_id });
  });
  const ids = answers.filter((answer) => answer.response.status === 201).map((answer) => answer.data!.data.id);
  expect(new Set(ids).size).toBe(8);
  for (const [index, { account }] of accounts.entries()) expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(10_000 - (100 + index) - (200 + index));
  expect((await accountOf(app.sandbox, declining.id)).current_balance).toBe(10_000);
  for (const id of ids) expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(1);
});

test('reservations made together never take more than the balance, also across a family, and a refused request fails alone', async () => {
  app.config.sandboxGatewayLatencyMs = 100;
  const { account, methodId } = await accountWithCard(app.sandbox, 10_000);
  const other = await accountWithCard(app.sandbox, 10_000);
  const customer = await newCustomer(app.sandbox);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(app.sandbox, customer.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(app.sandbox, customer.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(app.sandbox, customer.id, { balance: 5000, parent_external_id: parentKey });
  const requests = [
    ...[1, 2, 3, 4, 5].map(() => ({ amount: 3000, debt_account_id: account.id, payment_method_id: methodId })),
    // Another customer's method: refused on its own.
    { amount: 1000, debt_account_id: account.id, payment_method_id: other.methodId },
    ...[parent.id, older.id, younger.id, parent.id].map((id) => ({ amount: 3000, debt_account_id: id, card: testCard() })),
  ];
  const answers = await Promise.all(requests.map((body) => charge(body)));
  const statuses = answers.map((answer) => answer.response.status);
  // The stand-alone account: three of 3000 fit in 10,000, two do not.
  expect(statuses.slice(0, 5).sort()).toEqual([201, 201, 201, 422, 422]);
  expect(statuses[5]).toBe(422);
  expect((answers[5]!.error as ErrorBody).errors).toHaveProperty('payment_method_id');
  // The family: 8000 in all (3000 on the older child, 5000 on the younger); never more.
  const familyPaid = answers.slice(6).reduce((sum, answer) => sum + (answer.response.status === 201 ? answer.data!.data.amount : 0), 0);
  expect(familyPaid).toBeLessThanOrEqual(8000);
  expect(answers.slice(6).every((answer) => answer.response.status === 201 || answer.response.status === 422)).toBe(true);
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(1000);
  const read = async (id: string) => {
    const answer = await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id } } });
    if (!answer.data) throw new Error(`GET ${id}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    return answer.data.data;
  };
  const [olderNow, youngerNow, parentNow] = [await read(older.id), await read(younger.id), await read(parent.id)];
  expect(parentNow.current_balance).toBe(8000 - familyPaid);
  expect(olderNow.current_balance + youngerNow.current_balance).toBe(8000 - familyPaid);
  expect(olderNow.current_balance).toBeGreaterThanOrEqual(0);
  expect(youngerNow.current_balance).toBeGreaterThanOrEqual(0);
  expect(Number((await app.db('charges').whereIn('debt_account_id', [account.id, parent.id, older.id, younger.id]).where({ status: 'processing' }).count<{ n: string }[]>('* as n'))[0]!.n)).toBe(0);
});

test('a charge on a parent leaves to a charge still being made on a child what that charge holds, so the child never falls below 0', async () => {
  app.config.testSandboxLoseAnswerCents = 1313;
  // A lost answer is answered 202 at once, whatever the wait; the parent's charge, answered, has time to be recorded (201) on a loaded machine.
  app.config.gatewayAnswerWaitMs = 3000;
  const customer = await newCustomer(app.sandbox);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(app.sandbox, customer.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(app.sandbox, customer.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(app.sandbox, customer.id, { balance: 5000, parent_external_id: parentKey });
  // The gateway took 1313 on the older child, and its answer is not in yet.
  const onOlder = await charge({ amount: 1313, debt_account_id: older.id, card: testCard() });
  expect([onOlder.response.status, onOlder.data!.data.status]).toEqual([202, 'processing']);
  // The parent's charge answered whatever the machine's load (only the older child's answer is lost).
  app.config.gatewayAnswerWaitMs = 10_000;
  // 3000 on the parent: the older child's 3000 less the 1313 held, then the younger's.
  const onParent = await charge({ amount: 3000, debt_account_id: parent.id, card: testCard() });
  expect(onParent.response.status).toBe(201);
  expect([(await accountOf(app.sandbox, older.id)).current_balance, (await accountOf(app.sandbox, younger.id)).current_balance]).toEqual([1313, 5000 - 1313]);
  // The older child's answer, found by recovery, takes what it held.
  expect(await recoverCharge(app.deps, tenant, onOlder.data!.data.id)).toBe(true);
  expect((await app.sandbox.GET('/charges/{id}', { params: { path: { id: onOlder.data!.data.id } } })).data!.data.status).toBe('succeeded');
  expect([(await accountOf(app.sandbox, older.id)).current_balance, (await accountOf(app.sandbox, younger.id)).current_balance, (await accountOf(app.sandbox, parent.id)).current_balance]).toEqual([
    0,
    5000 - 1313,
    8000 - 1313 - 3000,
  ]);
});

test('a repeat of a charge still being made, asked beside new charges, is told it still runs and later gets that charge; the new ones are their own', async () => {
  app.config.testSandboxLoseAnswerCents = 1313;
  // The lost answer never comes, so the repeat is told 409 once this is over; the new ones are answered well within it.
  app.config.gatewayAnswerWaitMs = 3000;
  const { account, methodId } = await accountWithCard(app.sandbox, 10_000);
  const others = await Promise.all([0, 1, 2].map(() => accountWithCard(app.sandbox, 10_000)));
  const key = randomUUID();
  const body = { amount: 1313, debt_account_id: account.id, payment_method_id: methodId };
  const first = await app.sandbox.POST('/charges', { body, params: { header: { 'Idempotency-Key': key } } });
  expect([first.response.status, first.data!.data.status]).toEqual([202, 'processing']);
  const [again, ...fresh] = await Promise.all([
    app.sandbox.POST('/charges', { body, params: { header: { 'Idempotency-Key': key } } }),
    ...others.map((other, index) => charge({ amount: 500 + index, debt_account_id: other.account.id, payment_method_id: other.methodId })),
  ]);
  expect(again.response.status).toBe(409);
  expect((again.error as ErrorBody).errorCode).toBe('idempotency_key_in_use');
  expect(fresh.map((answer) => [answer.response.status, answer.data!.data.amount, answer.data!.data.debt_account_id])).toEqual(
    others.map((other, index) => [201, 500 + index, other.account.id]),
  );
  expect(await recoverCharge(app.deps, tenant, first.data!.data.id)).toBe(true);
  const later = await app.sandbox.POST('/charges', { body, params: { header: { 'Idempotency-Key': key } } });
  expect([later.response.status, later.data!.data.id, later.data!.data.status]).toEqual([201, first.data!.data.id, 'succeeded']);
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(10_000 - 1313);
  // The same key with another body: refused, nothing charged.
  const other = await app.sandbox.POST('/charges', { body: { ...body, amount: 1400 }, params: { header: { 'Idempotency-Key': key } } });
  expect(other.response.status).toBe(422);
  expect((other.error as ErrorBody).errorCode).toBe('idempotency_key_reused');
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(10_000 - 1313);
});
