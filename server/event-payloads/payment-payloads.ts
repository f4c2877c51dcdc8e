/**
 * Payloads of payments (spec 6.4): charge.succeeded and charge.failed (EventCharge), the ACH
 * outcomes (EventTransaction), void.succeeded and refund.succeeded (EventVoidRefundPayload: the
 * charge's identity and amounts and the transactions the void or refund made), and the charges
 * and transactions a debt-account payload lists. Built from the rows
 * payment-reads.ts loaded.
 */
import type { components } from '../../generated/schema';
import { embeddedAccount, methodUses } from './payloads';
import { eventTime, paymentDate } from './event-time';
import { builtOnce } from './built-once';
import { offerFields } from './settlement-offer-fields';
import type { PayloadRows } from './payload-reads';
import type { ChargeRow, TransactionRow } from './payment-reads';

type S = components['schemas'];

const TYPE_IDS = { charge: 1, void: 2, refund: 3, ach_settlement: 4, ach_return: 5, external: 6, external_reversal: 7, settlement_write_off: 8, settlement_write_off_reversal: 9, chargeback: 10, chargeback_reversal: 11 } as const;

/** value_type_id: a card's, a bank account's, or money received outside the gateway. */
const VALUE_TYPE_IDS = { card: 1, ach: 2, external: 3 } as const;

const dollars = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

function accountOf(id: string, rows: PayloadRows): S['EventEmbeddedDebtAccount'] | null {
  const account = rows.accounts.get(id);
  return account ? embeddedAccount(account, rows, null) : null;
}

/** The settlement offer the charge pays (its own, its plan's, or the one it completed), without what pays it; null when none. */
function offerOf(charge: ChargeRow, rows: PayloadRows): S['EventSettlementOffer'] | null {
  const offer = rows.payments.offersOfCharges.get(charge.id);
  return offer ? offerFields(offer) : null;
}

export function transactionPayload(row: TransactionRow, rows: PayloadRows): S['EventTransaction'] {
  return builtOnce(rows, `transaction:${row.id}`, () => transactionPart(row, rows));
}

function transactionPart(row: TransactionRow, rows: PayloadRows): S['EventTransaction'] {
  if (row.charge_id === null) return externalTransactionPayload(row, rows);
  const charge = rows.payments.charges.get(row.charge_id)!;
  const amount = Number(row.amount);
  return {
    id: Number(row.number),
    gateway_name: charge.gateway,
    gateway_code: row.return_code,
    reference_number: row.gateway_reference,
    transaction_key: row.id,
    type_id: TYPE_IDS[row.kind],
    value_type_id: VALUE_TYPE_IDS[charge.payment_method_type],
    epay_status_id: null,
    amount: dollars(amount),
    amount_cents: amount,
    source: charge.source,
    customer_id: rows.payments.customerNumbers.get(charge.customer_id) ?? 0,
    customer_uuid: charge.customer_id,
    submitted_date: eventTime(row.submitted_at),
    account_holder: charge.card?.card_holder ?? charge.bank_account?.account_holder ?? null,
    client_ip: null,
    server_ip: null,
    auth_code: null,
    avs_result: null,
    card_code_result: null,
    status: row.status,
    status_code: row.return_code,
    debt_account: accountOf(row.debt_account_id, rows),
    chargeback: null,
    debt_account_settlement_offer: offerOf(charge, rows),
    payment_plan_uuid: charge.payment_plan_id,
    scheduled_charge_uuid: charge.scheduled_at ? charge.id : null,
  };
}

/** A transaction of an external charge (money received outside the gateway, or its reversal). */
function externalTransactionPayload(row: TransactionRow, rows: PayloadRows): S['EventTransaction'] {
  const external = rows.payments.externalCharges.get(row.external_charge_id!)!;
  const amount = Number(row.amount);
  return {
    id: Number(row.number),
    gateway_name: 'external',
    gateway_code: null,
    reference_number: external.reference,
    transaction_key: row.id,
    type_id: TYPE_IDS[row.kind],
    value_type_id: VALUE_TYPE_IDS.external,
    epay_status_id: null,
    amount: dollars(amount),
    amount_cents: amount,
    source: 'external',
    customer_id: rows.payments.customerNumbers.get(external.customer_id) ?? 0,
    customer_uuid: external.customer_id,
    submitted_date: eventTime(row.submitted_at),
    account_holder: null,
    client_ip: null,
    server_ip: null,
    auth_code: null,
    avs_result: null,
    card_code_result: null,
    status: row.status,
    status_code: null,
    debt_account: accountOf(row.debt_account_id, rows),
    chargeback: null,
    debt_account_settlement_offer: null,
    payment_plan_uuid: null,
    scheduled_charge_uuid: null,
  };
}

/** The saved method a charge was (or is to be) made with, as payloads show it. */
function methodOf(charge: ChargeRow, rows: PayloadRows): S['EventPaymentMethod'] | null {
  return builtOnce(rows, `method-of:${charge.id}`, () => methodPart(charge, rows));
}

function methodPart(charge: ChargeRow, rows: PayloadRows): S['EventPaymentMethod'] | null {
  const method = charge.payment_method_id ? rows.payments.methods.get(charge.payment_method_id) : undefined;
  if (!method) return null;
  const stamp = { created_at: eventTime(charge.created_at), updated_at: eventTime(charge.updated_at) };
  return {
    id: method.id,
    type: method.type,
    card_token: charge.card ? { ...charge.card, ...stamp } : null,
    bank_account: charge.bank_account,
    is_primary: method.is_primary,
    billing_address: null,
    ...methodUses(method, rows),
    // The charge itself, while it is still scheduled, even if the method's row was read before it.
    has_active_scheduled_charge: method.has_scheduled_charge === true || charge.status === 'scheduled',
    created_at: eventTime(method.created_at),
    updated_at: eventTime(method.updated_at),
  };
}

const SOURCE_NAMES = { api: 'API', payment_plan: 'Payment plan', autopay: 'Autopay', settlement_offer: 'Settlement offer' } as const;

export function chargePayload(charge: ChargeRow, rows: PayloadRows): S['EventCharge'] {
  return builtOnce(rows, `charge:${charge.id}`, () => chargePart(charge, rows));
}

function chargePart(charge: ChargeRow, rows: PayloadRows): S['EventCharge'] {
  const amount = Number(charge.amount);
  const stamp = { created_at: eventTime(charge.created_at), updated_at: eventTime(charge.updated_at) };
  const [first] = rows.payments.transactionsOfCharge.get(charge.id) ?? [];
  return {
    id: charge.id,
    reference_number: charge.gateway_reference,
    payment_method_type: charge.payment_method_type,
    debt_account: accountOf(charge.debt_account_id, rows)!,
    card: charge.card ? { ...charge.card, ...stamp } : null,
    bank_account: charge.bank_account,
    payment_method: methodOf(charge, rows),
    billing_address: null,
    amount,
    total_amount: amount + Number(charge.fees),
    payment_date: paymentDate(charge.charged_at ?? charge.created_at),
    // Made and not declined; a charge still scheduled (or canceled before it ran) moved nothing.
    success: charge.status !== 'failed' && charge.status !== 'scheduled' && charge.status !== 'canceled',
    error: charge.error,
    error_code: charge.error_code,
    source: charge.source,
    source_name: SOURCE_NAMES[charge.source],
    fees: [],
    transaction: first ? transactionPayload(first, rows) : null,
    payment_plan_uuid: charge.payment_plan_id,
    payment_plan_charge_uuid: charge.payment_plan_charge_id,
    scheduled_charge_uuid: charge.scheduled_at ? charge.id : null,
    debt_account_settlement_offer: offerOf(charge, rows),
    ...stamp,
  };
}

/**
 * scheduled-charge.create, .update and .delete: the scheduled charge is the charge row itself
 * (same id); `charge` is shown once it has run, succeeded or failed.
 */
export function scheduledChargePayload(charge: ChargeRow, rows: PayloadRows): S['EventScheduledCharge'] {
  return builtOnce(rows, `scheduled:${charge.id}`, () => scheduledPart(charge, rows));
}

function scheduledPart(charge: ChargeRow, rows: PayloadRows): S['EventScheduledCharge'] {
  const amount = Number(charge.amount);
  const ran = charge.status !== 'scheduled' && charge.status !== 'canceled';
  const through = ran && charge.status !== 'failed' && charge.charged_at;
  return {
    id: charge.id,
    payment_method_type: charge.payment_method_type,
    payment_method: methodOf(charge, rows),
    debt_account: accountOf(charge.debt_account_id, rows)!,
    scheduled_at: eventTime(charge.due_at ?? new Date(`${charge.scheduled_at}T00:00:00Z`)),
    successfully_charged_at: through ? eventTime(charge.charged_at!) : null,
    amount,
    source: charge.source,
    source_name: SOURCE_NAMES[charge.source],
    fees: [],
    total_amount: amount + Number(charge.fees),
    settlement_offer: offerOf(charge, rows),
    charge: ran ? chargePayload(charge, rows) : null,
    created_at: eventTime(charge.created_at),
    updated_at: eventTime(charge.updated_at),
  };
}

/**
 * A void or refund, named by one of its transactions: the transactions of the same charge and
 * kind made with it (in one database transaction, so at one `created_at`).
 */
export function moneyBackPayload(transactionId: string, rows: PayloadRows): S['EventVoidRefundPayload']['data'] {
  const named = rows.payments.transactions.get(transactionId)!;
  const charge = rows.payments.charges.get(named.charge_id!)!;
  const made = (rows.payments.transactionsOfCharge.get(charge.id) ?? []).filter(
    (row) => row.kind === named.kind && row.created_at.getTime() === named.created_at.getTime(),
  );
  const amount = made.reduce((sum, row) => sum - Number(row.amount), 0);
  return {
    id: charge.id,
    reference_number: charge.gateway_reference,
    status: charge.status,
    amount: -amount,
    amount_cents: -amount,
    charge_amount: Number(charge.amount),
    refunded_amount: Number(charge.refunded_amount),
    payment_method_type: charge.payment_method_type,
    debt_account_id: charge.debt_account_id,
    customer_uuid: charge.customer_id,
    transactions: made.map((row) => transactionPayload(row, rows)),
    created_at: eventTime(charge.created_at),
    updated_at: eventTime(charge.updated_at),
  };
}

/** The account's latest charges and transactions, newest first (as the API embeds them), and its charges still scheduled, soonest first. */
export function accountPayments(
  accountId: string,
  rows: PayloadRows,
): { charges: S['EventCharge'][]; transactions: S['EventTransaction'][]; scheduled_charges: S['EventScheduledCharge'][] } {
  return builtOnce(rows, `payments:${accountId}`, () => ({
    charges: (rows.payments.latestCharges.get(accountId) ?? []).map((charge) => chargePayload(charge, rows)),
    transactions: (rows.payments.latestTransactions.get(accountId) ?? []).map((row) => transactionPayload(row, rows)),
    scheduled_charges: (rows.payments.scheduledOf.get(accountId) ?? []).map((charge) => scheduledChargePayload(charge, rows)),
  }));
}
