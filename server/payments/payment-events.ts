/**
 * Every event that payments emit, in one place: services say what happened (a charge
 * succeeded, an ACH debit settled), and this file builds the payloads in the shapes of spec
 * 6.4 and hands them to the webhooks outbox. When events move to a single port, only this
 * file changes.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../http/auth';
import type { Boss } from '../jobs/queue';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { emitEvents, type WebhookEvent } from '../webhooks/emit';
import { embeddedAccount, eventTime } from '../webhooks/payloads';
import { customerEvents, debtAccountEvents, loadPayloadContext } from '../webhooks/resource-events';
import { chargeRepo, type ChargeRow, type TransactionRow } from './charge-repo';

type S = components['schemas'];

const dollars = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

function paymentDate(moment: Date): string {
  const iso = moment.toISOString();
  return `${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(0, 4)}`;
}

interface Loaded {
  charge: ChargeRow;
  customerNumber: number;
  ctx: Awaited<ReturnType<typeof loadPayloadContext>>;
}

async function load(trx: Knex, tenant: Tenant, chargeId: string): Promise<Loaded> {
  const charge = (await chargeRepo(trx, tenant).find(chargeId))!;
  const ctx = await loadPayloadContext(trx, tenant, [charge.customer_id]);
  const customer = await trx('customers').where({ id: charge.customer_id }).first('number');
  return { charge, ctx, customerNumber: Number(customer.number) };
}

function transactionPayload(row: TransactionRow, { charge, ctx, customerNumber }: Loaded, gateway: string): S['EventTransaction'] {
  const account = ctx.accounts.get(row.debt_account_id);
  const amount = Number(row.amount);
  return {
    id: Number(row.number),
    gateway_name: gateway,
    gateway_code: row.return_code,
    reference_number: row.gateway_reference,
    transaction_key: row.id,
    type_id: ({ charge: 1, void: 2, refund: 3, ach_settlement: 4, ach_return: 5 } as const)[row.kind],
    value_type_id: charge.payment_method_type === 'card' ? 1 : 2,
    epay_status_id: null,
    amount: dollars(amount),
    amount_cents: amount,
    source: charge.source,
    customer_id: customerNumber,
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
    debt_account: account ? embeddedAccount(account, ctx, null) : null,
    chargeback: null,
    debt_account_settlement_offer: null,
    payment_plan_uuid: null,
    scheduled_charge_uuid: null,
  };
}

function chargePayload(loaded: Loaded, transaction: TransactionRow | undefined): S['EventCharge'] {
  const { charge, ctx } = loaded;
  const account = ctx.accounts.get(charge.debt_account_id)!;
  const amount = Number(charge.amount);
  const stamp = { created_at: eventTime(charge.created_at), updated_at: eventTime(charge.updated_at) };
  const method = charge.payment_method_id ? ctx.paymentMethods.get(charge.customer_id)?.find((m) => m.id === charge.payment_method_id) : undefined;
  return {
    id: charge.id,
    reference_number: charge.gateway_reference,
    payment_method_type: charge.payment_method_type,
    debt_account: embeddedAccount(account, ctx, null),
    card: charge.card ? { ...charge.card, ...stamp } : null,
    bank_account: charge.bank_account,
    payment_method: method
      ? {
          id: method.id,
          type: method.type,
          card_token: charge.card ? { ...charge.card, ...stamp } : null,
          bank_account: charge.bank_account,
          is_primary: method.is_primary,
          billing_address: null,
          has_active_payment_plan: false,
          has_active_settlement_offer: false,
          has_active_scheduled_charge: false,
          created_at: eventTime(method.created_at),
          updated_at: eventTime(method.updated_at),
        }
      : null,
    billing_address: null,
    amount,
    total_amount: amount + Number(charge.fees),
    payment_date: paymentDate(charge.created_at),
    success: charge.status !== 'failed',
    error: charge.error,
    error_code: charge.error_code,
    source: charge.source,
    source_name: 'API',
    fees: [],
    transaction: transaction ? transactionPayload(transaction, loaded, charge.gateway) : null,
    payment_plan_uuid: null,
    payment_plan_charge_uuid: null,
    scheduled_charge_uuid: null,
    debt_account_settlement_offer: null,
    ...stamp,
  };
}

/** A void or refund: the charge's identity and amounts, and the transactions it made. */
function moneyBackPayload(loaded: Loaded, transactions: TransactionRow[], amount: number): Record<string, unknown> {
  const { charge } = loaded;
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
    transactions: transactions.map((row) => transactionPayload(row, loaded, charge.gateway)),
    created_at: eventTime(charge.created_at),
    updated_at: eventTime(charge.updated_at),
  };
}

/** debt-account.update for the accounts whose balance moved, and their parents. */
async function accountUpdates(trx: Knex, tenant: Tenant, accountIds: string[]): Promise<WebhookEvent[]> {
  const accounts = debtAccountRepo(trx, tenant);
  const rows = [];
  const seen = new Set<string>();
  for (const id of accountIds) {
    const row = await accounts.find(id);
    if (!row) continue;
    for (const target of [row.id, row.parent_id]) {
      if (target && !seen.has(target)) {
        seen.add(target);
        rows.push({ id: target, customer_id: row.customer_id });
      }
    }
  }
  return debtAccountEvents(trx, tenant, 'debt-account.update', rows);
}

export async function chargeMade(trx: Knex.Transaction, tenant: Tenant, boss: Boss, chargeId: string, accountIds: string[]): Promise<void> {
  const loaded = await load(trx, tenant, chargeId);
  const [first] = await chargeRepo(trx, tenant).transactionsOfCharge(chargeId);
  const name = loaded.charge.status === 'failed' ? 'charge.failed' : 'charge.succeeded';
  await emitEvents(trx, tenant, boss, [{ name, data: chargePayload(loaded, first) }, ...(await accountUpdates(trx, tenant, accountIds))]);
}

export async function moneyGivenBack(
  trx: Knex.Transaction,
  tenant: Tenant,
  boss: Boss,
  name: 'void.succeeded' | 'refund.succeeded',
  chargeId: string,
  transactions: TransactionRow[],
): Promise<void> {
  const loaded = await load(trx, tenant, chargeId);
  const amount = transactions.reduce((sum, row) => sum - Number(row.amount), 0);
  const accounts = transactions.map((row) => row.debt_account_id);
  await emitEvents(trx, tenant, boss, [{ name, data: moneyBackPayload(loaded, transactions, amount) }, ...(await accountUpdates(trx, tenant, accounts))]);
}

export async function achOutcome(
  trx: Knex.Transaction,
  tenant: Tenant,
  boss: Boss,
  name: 'transaction.settled-ach' | 'transaction.returned-ach',
  chargeId: string,
  transactions: TransactionRow[],
): Promise<void> {
  const loaded = await load(trx, tenant, chargeId);
  const events: WebhookEvent[] = transactions.map((row) => ({ name, data: transactionPayload(row, loaded, loaded.charge.gateway) }));
  if (name === 'transaction.returned-ach') events.push(...(await accountUpdates(trx, tenant, transactions.map((row) => row.debt_account_id))));
  await emitEvents(trx, tenant, boss, events);
}

/** A method saved with a charge changes the customer's payload, as saving it directly does. */
export async function paymentMethodSaved(trx: Knex.Transaction, tenant: Tenant, boss: Boss, customerId: string): Promise<void> {
  await emitEvents(trx, tenant, boss, await customerEvents(trx, tenant, 'customer.update', [customerId]));
}
