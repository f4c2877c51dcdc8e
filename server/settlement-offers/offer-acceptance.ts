/**
 * Accepting a pending offer (an agent through the API, or the debtor in the Portal) as a story:
 * check the request against the offer, then, in the one transaction that sets up what pays it
 * (the plan, or the charge reserved or scheduled, through the public services of plans and
 * payments), mark the offer `accepted`, give the account its settlement (so the payment terms
 * ask the settled sum) and link the plan or charge: a crash leaves all of it or none. The
 * gateway is asked after that commit; its answer (or recovery's, after a crash) moves the
 * offer through the events port (offer-listeners.ts): completed when the settled sum is paid,
 * `pending` again when the charge was declined or never received.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { todayUtc } from '../kernel/dates';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { customerRepo } from '../customer-store/customer-repo';
import { lockAccount } from '../payments/balances';
import { chargeService } from '../payments/charge-service';
import { planService } from '../payment-plans/plan-service';
import { planRepo } from '../payment-plans/plan-repo';
import { checkPaymentMethod } from '../payment-plans/plan-rules';
import { paymentMethodService } from '../payment-methods/payment-method-service';
import { termsOf, type Channel } from '../payment-terms/payment-terms';
import { intentErrors, planAmountErrors, planStartErrors, throwIfAny, type AskedAt } from '../payment-terms/payment-intent';
import { offerToApi } from './offer-mapper';
import { offerRepo, setSettlementDiscount, type OfferRow } from './offer-repo';
import { defaultInstalment, instalmentError, instalmentsWithin } from './offer-terms';
import { expireOffer, offerChanged } from './offer-lifecycle';
import { offerNotFound } from './offer-service';

type S = components['schemas'];
type Accept = S['SettlementOfferAccept'];

export interface AcceptContext {
  /** Whose windows of time apply to a later day and a plan's start. */
  channel: Channel;
  /** A guest of the Portal: pays the settled sum once, today, with a new card or bank account. */
  guest?: boolean;
}

export interface Accepted {
  offer: S['SettlementOffer'];
  /** The charge made or scheduled, also a declined one. */
  chargeId?: string;
  /** Set when the card was declined at once: the offer is pending again. */
  declined?: ApiError;
}

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

/** What the request breaks, given the offer (read, not yet locked). */
function acceptErrors(offer: OfferRow, body: Accept, at: AskedAt, guest: boolean): FieldErrors {
  const settled = Number(offer.discounted_amount);
  const errors = intentErrors({ ...body, amount: settled, guest }, at);
  if (!offer.allowed.includes(body.option)) add(errors, 'option', `must be one of what the offer allows: ${offer.allowed.join(', ')}`);
  if (body.option === 'full_amount') {
    for (const field of ['frequency', 'start_date', 'instalment_amount'] as const) if (body[field] !== undefined) add(errors, field, 'applies only to the payment_plan option');
    return errors;
  }
  if (guest) add(errors, 'option', 'a guest pays the settled sum in one payment');
  if (body.scheduled_at !== undefined) add(errors, 'scheduled_at', 'applies only to the full_amount option');
  if (!body.payment_method_id && !body.save_payment_method) add(errors, 'payment_method_id', 'a plan needs a saved payment method: give payment_method_id, or save_payment_method with the card or ach');
  if (body.frequency === undefined) add(errors, 'frequency', 'is required for a payment plan');
  if (body.start_date === undefined) add(errors, 'start_date', 'is required for a payment plan');
  else planStartErrors(body.start_date, at, errors);
  return errors;
}

/** The plan's instalment: the one asked (422 when it runs past the months), or the smallest even split. */
function instalmentOf(offer: OfferRow, account: Parameters<typeof termsOf>[0], body: Accept, at: AskedAt): number {
  const settled = Number(offer.discounted_amount);
  const most = instalmentsWithin(body.frequency!, body.start_date!, offer.months_period);
  const terms = termsOf({ ...account, settlement_discount: offer.discount });
  if (body.instalment_amount === undefined) return defaultInstalment(settled, most, terms.minimum);
  const errors = planAmountErrors(terms, body.instalment_amount, body.frequency, { ...at, channel: 'api' });
  const tooLong = errors.amount ? undefined : instalmentError(settled, body.instalment_amount, body.frequency!, most, offer.months_period);
  const messages = [...(errors.amount ?? []), ...(tooLong ? [tooLong] : [])];
  if (messages.length > 0) throw ApiError.invalid({ instalment_amount: messages });
  return body.instalment_amount;
}

/**
 * The move to `accepted`, in the transaction that sets up what pays the offer (the plan's, or
 * the charge's reservation), with the account family locked: checked again under the locks,
 * then the account's settlement discount and the offer's status, committed together.
 */
async function markAccepted(trx: Knex.Transaction, tenant: Tenant, id: string, body: Accept, paymentMethodId: string | undefined, now: Date): Promise<void> {
  const found = await offerRepo(trx, tenant).find(id);
  // A method saved with the charge locks the customer, and the customer comes before the accounts.
  if (found && (body.card || body.ach) && body.save_payment_method) {
    const account = await debtAccountRepo(trx, tenant).find(found.debt_account_id);
    if (account) await customerRepo(trx, tenant).find(account.customer_id, { forUpdate: true });
  }
  const family = found && (await lockAccount(trx, tenant, found.debt_account_id));
  const offer = family && (await offerRepo(trx, tenant).find(id, { forUpdate: true }));
  if (!offer) throw offerNotFound();
  refuseUnlessPending(offer, family.account, now);
  await setSettlementDiscount(trx, tenant, offer.debt_account_id, Number(offer.discount));
  await offerRepo(trx, tenant).update(offer.id, { status: 'accepted', accepted_option: body.option, accepted_at: now, payment_method_id: paymentMethodId ?? null }, now);
}

/** The offer's charge (reserved or scheduled), in the transaction of its move: one `.update` for both. */
async function linkCharge(trx: Knex.Transaction, deps: Pick<AppDeps, 'events'>, tenant: Tenant, offerId: string, chargeId: string, now: Date): Promise<void> {
  await offerChanged(deps.events, trx, tenant, await offerRepo(trx, tenant).update(offerId, { charge_id: chargeId }, now));
}

export async function acceptOffer(deps: AppDeps, tenant: Tenant, id: string, body: Accept, context: AcceptContext): Promise<Accepted> {
  const now = nowFor(deps.clock, tenant);
  const at: AskedAt = { channel: context.channel, today: todayUtc(now) };
  const found = await offerRepo(deps.db, tenant).find(id);
  if (!found) throw offerNotFound();
  const account = (await debtAccountRepo(deps.db, tenant).find(found.debt_account_id))!;

  // Checked again under the locks of the transaction that accepts; here first so a refusal costs nothing.
  await refuseUnlessOpen(deps, tenant, found, account, now);
  const errors = acceptErrors(found, body, at, context.guest ?? false);
  // A method named must be the customer's before anything is written (the offer keeps it).
  if (body.payment_method_id) await checkPaymentMethod(deps.db, tenant, errors, body.payment_method_id, account.customer_id, now);
  throwIfAny(errors);
  const instalment = body.option === 'payment_plan' ? instalmentOf(found, account, body, at) : undefined;

  let paymentMethodId = body.payment_method_id;
  if (body.option === 'payment_plan' && !paymentMethodId) {
    const inline = body.card ? { card: body.card } : { ach: body.ach! };
    paymentMethodId = (await paymentMethodService(deps).create(tenant, account.customer_id, inline)).id;
  }

  if (body.option === 'payment_plan') {
    // The move, then the plan over the settled sum it makes due, then the link: one transaction.
    await planService(deps).create(
      tenant,
      { debt_account_id: found.debt_account_id, payment_method_id: paymentMethodId!, frequency: body.frequency!, start_date: body.start_date!, amount: instalment! },
      { channel: 'api', before: (trx) => markAccepted(trx, tenant, id, body, paymentMethodId, now), within: (trx) => linkPlan(trx, deps, tenant, id, now) },
    );
    return { offer: offerToApi((await offerRepo(deps.db, tenant).find(id))!) };
  }
  // The charge reserved (or scheduled) and the offer accepted commit together; the gateway is
  // asked after. Its answer, or recovery's after a crash, moves the offer (offer-listeners.ts):
  // completed when paid, pending again when declined or never received.
  const { payment_method_id, card, ach, save_payment_method, scheduled_at } = body;
  const charge = { amount: Number(found.discounted_amount), debt_account_id: found.debt_account_id, payment_method_id, card, ach, save_payment_method, scheduled_at };
  const outcome = await chargeService(deps).create(tenant, charge, undefined, {
    channel: context.channel,
    guest: context.guest,
    source: 'settlement_offer',
    before: (trx) => markAccepted(trx, tenant, id, body, paymentMethodId, now),
    reserved: (trx, made) => linkCharge(trx, deps, tenant, id, made.id, now),
  });
  return { offer: offerToApi((await offerRepo(deps.db, tenant).find(id))!), chargeId: outcome.charge.id, declined: outcome.declined };
}

/** 409 unless the offer is pending and fits the account; an offer found past `expires_at` expires here. */
async function refuseUnlessOpen(deps: Pick<AppDeps, 'db' | 'events'>, tenant: Tenant, offer: OfferRow, account: Parameters<typeof termsOf>[0], now: Date): Promise<void> {
  if (offer.status === 'pending' && offer.expires_at && offer.expires_at.getTime() <= now.getTime()) {
    await deps.db.transaction(async (trx) => {
      const locked = await offerRepo(trx, tenant).find(offer.id, { forUpdate: true });
      if (locked?.status === 'pending') await expireOffer(trx, deps.events, tenant, locked, now);
    });
    throw ApiError.conflict('The settlement offer is expired; only a pending offer can be accepted.');
  }
  refuseUnlessPending(offer, account, now);
}

/** 409 unless the offer is pending, not past `expires_at`, and fits the account as it is. */
function refuseUnlessPending(offer: OfferRow, account: Parameters<typeof termsOf>[0], now: Date): void {
  if (offer.status === 'pending' && offer.expires_at && offer.expires_at.getTime() <= now.getTime()) throw ApiError.conflict('The settlement offer is expired; only a pending offer can be accepted.');
  if (offer.status !== 'pending') throw ApiError.conflict(`The settlement offer is ${offer.status}; only a pending offer can be accepted.`);
  const { refusal } = termsOf(account);
  if (refusal?.reason === 'disputed') throw new ApiError('account_disputed', refusal.message);
  if (refusal) throw ApiError.conflict(`The settlement offer cannot be accepted: ${refusal.message}.`);
  if (Number(account.current_balance) !== Number(offer.amount)) throw ApiError.conflict('The balance changed since the offer was made; the agency makes a new one.');
}

async function linkPlan(trx: Knex.Transaction, deps: Pick<AppDeps, 'events'>, tenant: Tenant, offerId: string, now: Date): Promise<void> {
  const offer = (await offerRepo(trx, tenant).find(offerId, { forUpdate: true }))!;
  const plan = (await planRepo(trx, tenant).openOf(offer.debt_account_id))!;
  await planRepo(trx, tenant).update(plan.id, { source: 'settlement_offer' });
  await offerChanged(deps.events, trx, tenant, await offerRepo(trx, tenant).update(offer.id, { payment_plan_id: plan.id }, now));
}
