/**
 * Scheduled charges: a charge for a later day is stored `scheduled` (no gateway call, no
 * balance change) and carried out on its day by the due-work job, at the hour plan instalments
 * run, on its tenant's clock. Carrying one out runs in one transaction that locks the account
 * family and the charge, checks it is still due, records the run as a row keyed by the charge
 * (two processes racing over one due charge cannot both record it) and reserves it
 * (`processing`); the gateway is asked after that commit and its answer recorded as any
 * charge's (charge-steps.ts; recovery finishes one a crash left). A failed scheduled charge is
 * not retried (documented in the Charges tag).
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { scoped, tenantColumns } from '../db/tenant';
import { termsOf } from '../payment-terms/payment-terms';
import { dueAt, todayUtc } from '../kernel/dates';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { paymentMethodRepo } from '../payment-methods/payment-method-repo';
import type { PaymentGateway } from '../gateway/gateway';
import { lockAccount } from './balances';
import { CHARGES, chargeRepo, type ChargeRow, type ChargeValues } from '../charge-store/charge-repo';
import type { AnsweredValues } from './charge-outcome';
import { askAndRecord } from './charge-steps';
import type { PaymentDeps } from './payment-deps';
import { chargeMade } from './payment-events';
import { announce } from '../events/listeners';
import { nowFor } from '../kernel/clock';

export const SCHEDULED_CHARGE_RUNS = 'scheduled_charge_runs';

/** Stores the charge `scheduled` for `day` (the caller checked the request and holds the account's lock). */
export async function scheduleCharge(
  deps: PaymentDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  values: Omit<ChargeValues, keyof AnsweredValues>,
  day: string,
  /** Runs once the charge is stored, before `scheduled-charge.create` names it (a settlement's link). */
  stored?: (charge: ChargeRow) => Promise<void>,
): Promise<ChargeRow> {
  const charge = await chargeRepo(trx, tenant).insert({
    ...values,
    status: 'scheduled',
    gateway_reference: null,
    error: null,
    error_code: null,
    settled_at: null,
    settles_at: null,
    scheduled_at: day,
    due_at: dueAt(day),
  });
  await stored?.(charge);
  await deps.events.record(trx, tenant, [{ name: 'scheduled-charge.create', ids: [charge.id] }]);
  return charge;
}

/** The charge and its account family, locked in the order a charge locks them. */
async function lockScheduled(trx: Knex.Transaction, tenant: Tenant, id: string) {
  const charges = chargeRepo(trx, tenant);
  const unlocked = await charges.find(id);
  if (!unlocked) return undefined;
  const family = await lockAccount(trx, tenant, unlocked.debt_account_id);
  const charge = (await charges.find(id, { forUpdate: true }))!;
  return { charge, family };
}

/** POST /charges/{id}/cancel: a scheduled charge only; anything else is a 409. */
export async function cancelScheduledCharge(deps: PaymentDeps, tenant: Tenant, id: string): Promise<ChargeRow> {
  return deps.db.transaction(async (trx) => {
    const locked = await lockScheduled(trx, tenant, id);
    if (!locked) throw ApiError.notFound('Charge');
    const { charge } = locked;
    if (charge.status !== 'scheduled') {
      throw ApiError.conflict(
        charge.status === 'canceled' ? 'The charge is already canceled.' : `Only a scheduled charge can be canceled; this one is ${charge.status} (void or refund a charge that was made).`,
      );
    }
    const canceled = await chargeRepo(trx, tenant).update(charge.id, { status: 'canceled' });
    await deps.events.record(trx, tenant, [{ name: 'scheduled-charge.delete', ids: [charge.id] }]);
    // A settlement offer it was to pay is open again (settlement-offers listen).
    await announce(trx, deps.events, tenant, 'charge.canceled', { charge: canceled, now: nowFor(deps.clock, tenant) });
    return canceled;
  });
}

export interface DueChargeRef {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  due_at: Date;
  lane?: string;
}

/** Scheduled charges due at `realNow` on their tenant's clock (as dueInstalments): each tenant's earliest first, the tenants taking turns. */
export async function dueScheduledCharges(db: Knex, realNow: Date, limit = 500): Promise<DueChargeRef[]> {
  const { rows } = await db.raw<{ rows: DueChargeRef[] }>(
    `SELECT id, organization_id, environment, due_at, lane FROM (
       SELECT ch.id, ch.organization_id, ch.environment, ch.due_at, ch.debt_account_id AS lane,
              row_number() OVER (PARTITION BY ch.organization_id, ch.environment ORDER BY ch.due_at, ch.id) AS turn
         FROM ${CHARGES} ch
         LEFT JOIN sandbox_clocks c ON ch.environment = 'sandbox' AND c.organization_id = ch.organization_id
        WHERE ch.status = 'scheduled'
          AND ch.due_at <= ?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
     ) due
      ORDER BY turn, due_at, id
      LIMIT ?`,
    [realNow, limit],
  );
  return rows;
}

/** One tenant's scheduled charges due at or before `upTo`, earliest first (the sandbox clock's advance). */
export async function dueScheduledChargesOf(db: Knex, tenant: Tenant, upTo: Date, limit = 200): Promise<DueChargeRef[]> {
  return scoped(db, CHARGES, tenant)
    .where({ status: 'scheduled' })
    .where('due_at', '<=', upTo)
    .orderBy([{ column: 'due_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'organization_id', 'environment', 'due_at');
}

/**
 * Carries out the scheduled charge `id` at `now` (its tenant's time) when it is still due;
 * answers whether it did anything. `deps.clock` reads the app's time of `now`.
 */
export async function runScheduledCharge(deps: PaymentDeps, gateway: PaymentGateway | undefined, tenant: Tenant, id: string, now: Date): Promise<boolean> {
  const reserved = await deps.db.transaction(async (trx): Promise<boolean | { charge: ChargeRow; token: string }> => {
    const locked = await lockScheduled(trx, tenant, id);
    if (!locked) return false;
    const { charge, family } = locked;
    if (charge.status !== 'scheduled' || !charge.due_at || charge.due_at.getTime() > now.getTime()) return false;
    const charges = chargeRepo(trx, tenant);
    const terms = family && termsOf(family.account);
    const collectible = terms?.payable === true;
    const balance = terms?.balance ?? 0;
    // The key of exactly once: a second process recording this run fails here.
    await trx(SCHEDULED_CHARGE_RUNS).insert({ charge_id: charge.id, outcome: collectible ? 'charged' : 'canceled', ...tenantColumns(tenant) });

    if (!collectible) {
      // Paid off, closed or otherwise out of collection by its day: canceled, not charged.
      const canceled = await charges.update(charge.id, { status: 'canceled', charged_at: now });
      await deps.events.record(trx, tenant, [{ name: 'scheduled-charge.delete', ids: [charge.id] }]);
      await announce(trx, deps.events, tenant, 'charge.canceled', { charge: canceled, now });
      return true;
    }
    const amount = Math.min(Number(charge.amount), terms!.maximum);
    const method = charge.payment_method_id ? await paymentMethodRepo(trx, tenant).find(charge.payment_method_id) : undefined;
    const refusal = !gateway
      ? { error_code: 'processor_not_configured', error: 'No payment processor is configured for production; no money was moved. Configure one with PUT /payment-processor.' }
      : !method?.gateway_token
        ? { error_code: 'no_payment_method', error: 'The payment method of the scheduled charge was deleted.' }
        : !isChargeable(method, now)
          ? { error_code: 'expired_card', error: 'The card of the scheduled charge has expired.' }
          : undefined;
    if (!refusal) return { charge: await charges.update(charge.id, { status: 'processing', amount, charged_at: now }), token: method!.gateway_token! };
    const failed = await charges.update(charge.id, { status: 'failed', ...refusal, charged_at: now });
    await chargeMade(deps.events, trx, tenant, failed, []);
    await deps.events.record(trx, tenant, [{ name: 'scheduled-charge.update', ids: [charge.id] }]);
    // Refused without the gateway, as a decline on its day (a settlement offer it paid is broken).
    await announce(trx, deps.events, tenant, 'charge.declined', { charge: failed, now });
    return true;
  });
  if (typeof reserved === 'boolean') return reserved;
  // scheduled-charge.update fires with the answer (charge-steps.ts).
  await askAndRecord(deps, gateway!, tenant, reserved.charge, reserved.token, { now });
  return true;
}
