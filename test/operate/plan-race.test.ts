/**
 * Two server processes over the same due instalments and scheduled charges, one killed
 * (SIGKILL) in the middle: every instalment and every scheduled charge is charged exactly
 * once. The attempt row keyed (instalment, attempt), the run row keyed by the scheduled charge,
 * and the account lock decide; what the killed process had in hand rolls back and is done by
 * the other one.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '../../server/db/database';
import { createLogger } from '../../server/logging';
import { startQueue, QUEUES } from '../../server/jobs/queue';
import { createOrganization } from '../../server/organizations/organization-repo';
import { CARD_YEAR } from '../support/fixtures';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually } from '../support/webhooks';

const PLANS = 40;
const INSTALMENTS = 4;

test('two processes race over 160 due instalments and 40 scheduled charges, one is killed mid-way: each is charged once', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const key = randomBytes(32).toString('base64');
  const children: Spawned[] = [];
  try {
    const organization = await createOrganization(db, 'Race Test Agency');
    const { server: first, port: firstPort } = await startServerProcess(database.url, { DATA_ENCRYPTION_KEY: key });
    children.push(first);
    const api = processClient(firstPort, organization.sandbox_token);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await Promise.all(
      Array.from({ length: PLANS }, async (_, i) => {
        const customer = (await api.POST('/customers', { body: { name: `Racer ${i}`, email: `racer${i}@mail.debt-collection.example` } })).data!.data;
        const account = (await api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: `LOC-RACE-${i}`, location_name: 'Race Clinic', balance: INSTALMENTS * 1000 } })).data!.data;
        const card = { card_holder: 'Racer', card_number: '4242424242424242', card_expiration_month: 8, card_expiration_year: CARD_YEAR, card_security_code: '123' };
        const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } })).data!.data;
        const plan = await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: today, amount: 1000 } });
        expect(plan.response.status).toBe(201);
        const other = (await api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: `LOC-RACE-${i}`, balance: 500 } })).data!.data;
        const scheduled = await api.POST('/charges', { body: { amount: 500, debt_account_id: other.id, payment_method_id: method.id, scheduled_at: tomorrow } });
        expect(scheduled.data?.data.status).toBe('scheduled');
      }),
    );
    // Everything due at once (as after a long downtime).
    await db('payment_plan_charges').update({ due_at: db.raw(`now() - interval '1 minute'`) });
    await db('charges').where({ status: 'scheduled' }).update({ due_at: db.raw(`now() - interval '1 minute'`) });

    children.push((await startServerProcess(database.url, { DATA_ENCRYPTION_KEY: key })).server);
    // Work for both processes at once.
    const boss = await startQueue(database.url, createLogger('silent'));
    for (let i = 0; i < 4; i += 1) await boss.send(QUEUES.dueWork, {});
    await boss.stop({ graceful: false });

    const charged = async () => Number((await db('charges').whereNot({ status: 'scheduled' }).count<{ count: string }[]>({ count: '*' }))[0]!.count);
    await eventually(async () => (await charged()) >= 10, 'charges under way', 60_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = await charged();

    const pending = async () =>
      Number((await db('payment_plan_charges').where({ status: 'pending' }).count<{ count: string }[]>({ count: '*' }))[0]!.count) +
      Number((await db('charges').where({ status: 'scheduled' }).count<{ count: string }[]>({ count: '*' }))[0]!.count);
    await eventually(async () => (await pending()) === 0, 'every instalment and scheduled charge carried out', 120_000);

    const perInstalment: { payment_plan_charge_id: string; count: string }[] = await db('charges')
      .whereNotNull('payment_plan_charge_id')
      .groupBy('payment_plan_charge_id')
      .select('payment_plan_charge_id', db.raw('count(*) AS count'));
    expect(perInstalment).toHaveLength(PLANS * INSTALMENTS);
    expect(perInstalment.every((row) => Number(row.count) === 1)).toBe(true);
    const attempts = await db('payment_plan_charge_attempts').select('attempt');
    expect(attempts).toHaveLength(PLANS * INSTALMENTS);
    expect(attempts.every((row) => row.attempt === 1)).toBe(true);
    // A scheduled charge is its own row: charged twice would mean two gateway payments or two runs.
    const scheduled = await db('charges').whereNotNull('scheduled_at').select('id', 'status');
    expect(scheduled).toHaveLength(PLANS);
    expect(scheduled.every((row) => row.status === 'succeeded')).toBe(true);
    expect(await db('scheduled_charge_runs').count<{ count: string }[]>({ count: '*' })).toEqual([{ count: String(PLANS) }]);
    expect(await db('sandbox_payments').count<{ count: string }[]>({ count: '*' })).toEqual([{ count: String(PLANS * INSTALMENTS + PLANS) }]);
    const balances = await db('debt_accounts').select('current_balance', 'status');
    expect(balances.every((row) => Number(row.current_balance) === 0 && row.status === 'paid_off')).toBe(true);
    expect(await db('payment_plans').whereNot({ status: 'completed' }).count<{ count: string }[]>({ count: '*' })).toEqual([{ count: '0' }]);
    console.log(`plan race: ${PLANS * INSTALMENTS} instalments and ${PLANS} scheduled charges, ${atKill} made when one process was killed, each charged once in the end`);
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await db.destroy();
    await database.drop();
  }
}, 240_000);
