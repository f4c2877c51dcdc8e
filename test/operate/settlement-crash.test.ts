/**
 * A server process killed (SIGKILL) while a settlement is accepted, between the steps of its
 * charge (TEST_CHARGE_STEP die:<step>@<cents>): after the reservation committed, and after the
 * gateway answered. The offer's move committed with the reservation, so the dead process
 * leaves it `accepted` with its charge `processing`, never accepted with nothing set up; the
 * next process's recovery finishes the charge and the offer follows: released (never
 * received) → `pending` again, the balance untouched; taken → `completed`, the rest written off.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '../../server/db/database';
import { createOrganization } from '../../server/organizations/organization-repo';
import { testCard } from '../support/fixtures';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually } from '../support/webhooks';

const BALANCE = 50_000;
const CASES = [
  { step: 'reserved', cents: 30_001, offer: 'pending', balance: BALANCE, charge: 'failed' },
  { step: 'answered', cents: 30_002, offer: 'completed', balance: 0, charge: 'succeeded' },
] as const;

test('killed after the reservation and after the answer: the offer is accepted with its charge, and follows the charge once recovery finishes it', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const env = { DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const children: Spawned[] = [];
  try {
    const organization = await createOrganization(db, 'Settlement Crash Agency');
    const made = [];
    for (const each of CASES) {
      const { server, port } = await startServerProcess(database.url, { ...env, TEST_CHARGE_STEP: `die:${each.step}@${each.cents}` });
      children.push(server);
      const api = processClient(port, organization.sandbox_token);
      const customer = (await api.POST('/customers', { body: { name: `Crash ${each.step}`, email: `settle-${each.step}@mail.debt-collection.example` } })).data!.data;
      const account = (await api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: 'LOC-CRASH', location_name: 'Crash Clinic', balance: BALANCE } })).data!.data;
      const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data;
      const offer = (await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: account.id } }, body: { discounted_amount: each.cents, months_period: 0 } })).data!.data;
      // The process dies at the step: the request never answers.
      const answered = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: offer.id } }, body: { option: 'full_amount', payment_method_id: method.id } }).then(
        () => true,
        () => false,
      );
      expect({ step: each.step, answered }).toEqual({ step: each.step, answered: false });
      await server.exited;
      // What the dead process left: the move and its charge, committed together.
      const left = await db('settlement_offers').where({ id: offer.id }).first('status', 'charge_id');
      const charge = await db('charges').where({ debt_account_id: account.id }).first('id', 'status', 'source');
      expect({ step: each.step, left, charge }).toEqual({ step: each.step, left: { status: 'accepted', charge_id: charge.id }, charge: { id: charge.id, status: 'processing', source: 'settlement_offer' } });
      made.push({ ...each, offerId: offer.id, accountId: account.id, chargeId: charge.id as string });
    }

    // The next process recovers at once (0 s).
    const { server, port } = await startServerProcess(database.url, { ...env, CHARGE_RECOVERY_AFTER_SECONDS: '0' });
    children.push(server);
    const processing = async () => Number((await db('charges').where({ status: 'processing' }).count<{ count: string }[]>('* as count'))[0]!.count);
    await eventually(async () => (await processing()) === 0, 'no charge left processing', 60_000);
    const api = processClient(port, organization.sandbox_token);
    for (const each of made) {
      const offer = (await api.GET('/settlement-offers/{id}', { params: { path: { id: each.offerId } } })).data!.data;
      const charge = (await api.GET('/charges/{id}', { params: { path: { id: each.chargeId } } })).data!.data;
      const account = (await api.GET('/debt-accounts/{id}', { params: { path: { id: each.accountId } } })).data!.data;
      expect({ step: each.step, offer: offer.status, charge: charge.status, balance: account.current_balance }).toEqual({
        step: each.step,
        offer: each.offer,
        charge: each.charge,
        balance: each.balance,
      });
      const writeOff = await db('transactions').where({ debt_account_id: each.accountId, kind: 'settlement_write_off' }).sum<{ sum: string | null }[]>('amount as sum');
      expect({ step: each.step, writtenOff: Number(writeOff[0]!.sum ?? 0) }).toEqual({ step: each.step, writtenOff: each.offer === 'completed' ? BALANCE - each.cents : 0 });
    }
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await db.destroy();
    await database.drop();
  }
}, 300_000);
