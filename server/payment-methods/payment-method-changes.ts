/**
 * A saved payment method read, made primary or deleted. A customer with methods always has
 * exactly one primary: making one primary demotes the other, deleting the primary promotes
 * the oldest remaining one. The customer's row is locked first, so two changes of one
 * customer's methods run one after the other. Each change emits customer.update, as create does.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { customerRepo } from '../customer-store/customer-repo';
import type { EventRecorder } from '../events/events';
import { paymentMethodRepo, type PaymentMethodRow } from './payment-method-repo';

type PaymentMethodUpdate = components['schemas']['PaymentMethodUpdate'];

export async function findPaymentMethod(db: Knex, tenant: Tenant, id: string): Promise<PaymentMethodRow> {
  const row = await paymentMethodRepo(db, tenant).find(id);
  if (!row) throw ApiError.notFound('Payment method');
  return row;
}

/** The method and its customer, both locked for the change. */
async function lockMethod(trx: Knex.Transaction, tenant: Tenant, id: string): Promise<PaymentMethodRow> {
  const unlocked = await findPaymentMethod(trx, tenant, id);
  await customerRepo(trx, tenant).find(unlocked.customer_id, { forUpdate: true });
  const row = await paymentMethodRepo(trx, tenant).find(id, { forUpdate: true });
  if (!row) throw ApiError.notFound('Payment method');
  return row;
}

export async function updatePaymentMethod(db: Knex, events: EventRecorder, tenant: Tenant, id: string, body: PaymentMethodUpdate): Promise<PaymentMethodRow> {
  return db.transaction(async (trx) => {
    const row = await lockMethod(trx, tenant, id);
    if (!body.is_primary && row.is_primary) {
      throw ApiError.field('is_primary', 'the primary payment method cannot be demoted; make another method primary instead');
    }
    if (!body.is_primary || row.is_primary) return row;
    const methods = paymentMethodRepo(trx, tenant);
    await methods.demoteAll(row.customer_id);
    const updated = await methods.makePrimary(row.id);
    await events.record(trx, tenant, [{ name: 'customer.update', ids: [row.customer_id] }]);
    return updated;
  });
}

export async function deletePaymentMethod(db: Knex, events: EventRecorder, tenant: Tenant, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await lockMethod(trx, tenant, id);
    const methods = paymentMethodRepo(trx, tenant);
    await methods.delete(row.id);
    if (row.is_primary) await methods.promoteOldest(row.customer_id);
    await events.record(trx, tenant, [{ name: 'customer.update', ids: [row.customer_id] }]);
  });
}

/** The customer addressed by `{id|external_id}`, for listing its methods. */
export async function customerIdOf(db: Knex, tenant: Tenant, key: string): Promise<string> {
  const customer = await customerRepo(db, tenant).find(key);
  if (!customer) throw ApiError.notFound('Customer');
  return customer.id;
}
