/**
 * A server process killed (SIGKILL) between the steps of a charge — after the reservation
 * committed, after the gateway answered, after the answer was recorded — for a card charge, an
 * ACH debit, a scheduled charge on its day, a plan's instalment and an autopay run: once another process starts,
 * recovery leaves no charge recorded twice and none lost (what the gateway took is what we
 * recorded, account by account), every balance is the original less what was taken, no charge
 * is left `processing`, a reservation the gateway never received is released, and an autopay
 * run ends charged, or failed with its one e-mail, as its charge did.
 *
 * Light on purpose: one process takes all fifteen charges at once, each paused at its own step
 * by the test-only TEST_CHARGE_STEP (chosen by amount), is killed once, and one more process
 * recovers them all.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from '../../server/db/database';
import { createLogger } from '../../server/kernel/logging';
import { startQueue, QUEUES } from '../../server/jobs/queue';
import { createOrganization } from '../../server/organizations/organization-repo';
import { testAch, testCard } from '../support/fixtures';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually } from '../support/webhooks';

const KINDS = ['card', 'ach', 'scheduled', 'instalment', 'autopay'] as const;
const STEPS = ['reserved', 'answered', 'recorded'] as const;
type Kind = (typeof KINDS)[number];
type Step = (typeof STEPS)[number];

const BALANCE = 10_000;
/** Each case its own amount, so the process pauses each at its own step: 1101 is a card charge paused once reserved. */
const amountOf = (kind: Kind, step: Step) => (KINDS.indexOf(kind) + 1) * 1000 + 100 + STEPS.indexOf(step) + 1;
const pauses = KINDS.flatMap((kind) => STEPS.map((step) => `pause:${step}@${amountOf(kind, step)}`)).join(',');

interface Case {
  kind: Kind;
  step: Step;
  accountId: string;
  key: string;
  request?: Promise<unknown>;
}

test('killed between the steps of fifteen charges (card, ACH, scheduled, instalment, autopay × reserved, answered, recorded): recovery records each once or releases it', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const env = { DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const children: Spawned[] = [];
  try {
    const organization = await createOrganization(db, 'Crash Test Agency');
    const { server: first, port } = await startServerProcess(database.url, { ...env, TEST_CHARGE_STEP: pauses });
    children.push(first);
    const api = processClient(port, organization.sandbox_token);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

    const cases: Case[] = await Promise.all(
      KINDS.flatMap((kind) =>
        STEPS.map(async (step, index): Promise<Case> => {
          const amount = amountOf(kind, step);
          const customer = (await api.POST('/customers', { body: { name: `Crash ${kind} ${step}`, email: `crash-${kind}-${index}@mail.debt-collection.example` } })).data!.data;
          const account = (await api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: 'LOC-CRASH', location_name: 'Crash Clinic', balance: BALANCE } })).data!.data;
          const method = (
            await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: kind === 'ach' ? { ach: testAch('000123456789') } : { card: testCard() } })
          ).data!.data;
          const key = randomUUID();
          const body = { amount, debt_account_id: account.id, payment_method_id: method.id };
          if (kind === 'card' || kind === 'ach') {
            // Answered only if the process lives: it pauses, then dies.
            const request = api.POST('/charges', { body, params: { header: { 'Idempotency-Key': key } } }).catch(() => undefined);
            return { kind, step, accountId: account.id, key, request };
          }
          if (kind === 'autopay') {
            // Autopay as the Portal turns it on, due once the due work runs (below).
            await db('autopays').insert({
              organization_id: organization.organization_id,
              environment: 'sandbox',
              debt_account_id: account.id,
              customer_id: customer.id,
              payment_method_id: method.id,
              amount_type: 'custom',
              amount,
              day_of_month: 1,
              next_run_at: new Date(Date.now() + 86_400_000),
            });
          } else if (kind === 'scheduled') {
            expect((await api.POST('/charges', { body: { ...body, scheduled_at: tomorrow } })).response.status).toBe(201);
          } else {
            const plan = await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: method.id, frequency: 'monthly', start_date: tomorrow, amount } });
            expect(plan.response.status).toBe(201);
          }
          return { kind, step, accountId: account.id, key };
        }),
      ),
    );
    // The scheduled charges, each plan's first instalment and the autopays fall due now, all at
    // once: the due work's flow takes them all (nine items, far fewer than it has in flight;
    // these never end).
    await db.transaction(async (trx) => {
      await trx('charges').where({ status: 'scheduled' }).update({ due_at: trx.raw(`now() - interval '1 minute'`) });
      await trx.raw(`UPDATE payment_plan_charges SET due_at = now() - interval '1 minute' WHERE seq = 1 AND status = 'pending'`);
      await trx('autopays').update({ next_run_at: trx.raw(`now() - interval '1 minute'`) });
    });
    const boss = await startQueue(database.url, createLogger('silent'));
    await boss.send(QUEUES.dueWork, {});
    await boss.stop({ graceful: false });

    const paused = () => (first.output().match(/TEST_CHARGE_STEP paused at/g) ?? []).length;
    await eventually(() => paused() === cases.length, `every charge paused at its step (${cases.length})`, 150_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${paused()} paused\n${first.output().slice(-4000)}`);
    });
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(cases.map((each) => each.request));

    // Recovery asks at once (0 s) when the next process starts.
    const { server: second, port: secondPort } = await startServerProcess(database.url, { ...env, CHARGE_RECOVERY_AFTER_SECONDS: '0' });
    children.push(second);
    const processing = async () => Number((await db('charges').where({ status: 'processing' }).count<{ count: string }[]>('* as count'))[0]!.count);
    await eventually(async () => (await processing()) === 0, 'no charge left processing', 60_000);

    for (const each of cases) {
      const what = `${each.kind} killed once ${each.step}`;
      const charges = await db('charges').where({ debt_account_id: each.accountId }).select('id', 'status', 'amount', 'gateway_reference', 'error_code');
      expect({ what, count: charges.length }).toEqual({ what, count: 1 });
      const [charge] = charges;
      const taken = await db('sandbox_payments')
        .join('payment_methods', 'payment_methods.gateway_token', 'sandbox_payments.token')
        .join('debt_accounts', 'debt_accounts.customer_id', 'payment_methods.customer_id')
        .where('debt_accounts.id', each.accountId)
        .whereIn('sandbox_payments.status', ['succeeded', 'pending'])
        .select('sandbox_payments.reference', 'sandbox_payments.amount');
      const recorded = ['succeeded', 'pending'].includes(charge.status) ? [{ reference: charge.gateway_reference, amount: charge.amount }] : [];
      // None twice, none lost: what the gateway took is exactly what we recorded.
      expect({ what, taken }).toEqual({ what, taken: recorded });
      const account = await db('debt_accounts').where({ id: each.accountId }).first('current_balance');
      expect({ what, balance: Number(account.current_balance) }).toEqual({ what, balance: BALANCE - recorded.reduce((sum, row) => sum + Number(row.amount), 0) });
      // Killed before the gateway was asked: released; after: the payment stands.
      const expected = each.step === 'reserved' ? 'failed' : each.kind === 'ach' ? 'pending' : 'succeeded';
      expect({ what, status: charge.status }).toEqual({ what, status: expected });
      if (each.step === 'reserved') expect({ what, code: charge.error_code }).toEqual({ what, code: 'processing_error' });
      if (each.kind === 'instalment') {
        const instalment = await db('payment_plan_charges').where({ charge_id: charge.id }).first('status', 'attempts', 'due_at');
        expect({ what, status: instalment.status, attempts: instalment.attempts, retried: instalment.due_at !== null }).toEqual({
          what,
          status: each.step === 'reserved' ? 'pending' : 'succeeded',
          attempts: 1,
          retried: each.step === 'reserved',
        });
      }
      if (each.kind === 'autopay') {
        const run = await db('autopay_runs').where({ debt_account_id: each.accountId }).select('outcome', 'charge_id');
        const autopay = await db('autopays').where({ debt_account_id: each.accountId }).first('last_outcome');
        const mails = await db('communications').where({ debt_account_id: each.accountId, kind: 'autopay_failed' }).count<{ count: string }[]>('* as count');
        const outcome = each.step === 'reserved' ? 'failed' : 'charged';
        expect({ what, run, last: autopay.last_outcome, mails: Number(mails[0]!.count) }).toEqual({
          what,
          run: [{ outcome, charge_id: charge.id }],
          last: outcome,
          mails: each.step === 'reserved' ? 1 : 0,
        });
      }
    }

    // The same request again, on the new process: the one outcome (the released one as its 400).
    // The dead process's claim of each key is taken over once abandoned (minutes later): as if that time had passed.
    await db('idempotency_keys').where({ status: 'running' }).update({ locked_at: db.raw(`now() - interval '1 hour'`) });
    const again = processClient(secondPort, organization.sandbox_token);
    for (const each of cases.filter((c) => c.kind === 'card')) {
      const charge = await db('charges').where({ debt_account_id: each.accountId }).first('id', 'payment_method_id');
      const repeat = await again.POST('/charges', {
        body: { amount: amountOf(each.kind, each.step), debt_account_id: each.accountId, payment_method_id: charge.payment_method_id },
        params: { header: { 'Idempotency-Key': each.key } },
      });
      expect({ step: each.step, status: repeat.response.status }).toEqual({ step: each.step, status: each.step === 'reserved' ? 400 : 201 });
    }
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await db.destroy();
    await database.drop();
  }
}, 360_000);
