/** The one place where charge and transaction rows become API objects. */
import type { components } from '../../generated/schema';
import type { ChargeRow, TransactionRow } from './charge-repo';

type S = components['schemas'];

export function chargeToApi(row: ChargeRow): S['Charge'] {
  const amount = Number(row.amount);
  const fees = Number(row.fees);
  return {
    id: row.id,
    reference_number: row.reference_number,
    status: row.status,
    amount,
    total_amount: amount + fees,
    fees,
    refunded_amount: Number(row.refunded_amount),
    payment_method_type: row.payment_method_type,
    payment_method_id: row.payment_method_id,
    card: row.card,
    bank_account: row.bank_account,
    debt_account_id: row.debt_account_id,
    customer_id: row.customer_id,
    error: row.error,
    error_code: row.error_code,
    return_code: row.return_code,
    source: row.source,
    payment_plan_uuid: row.payment_plan_id,
    payment_plan_charge_uuid: row.payment_plan_charge_id,
    scheduled_at: row.scheduled_at,
    email: row.send_email ? row.email : null,
    metadata: row.metadata,
    ...(row.chargebacks?.length ? { chargebacks: row.chargebacks } : {}),
    settled_at: row.settled_at ? row.settled_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function transactionToApi(row: TransactionRow): S['Transaction'] {
  return {
    id: row.id,
    number: Number(row.number),
    charge_id: row.charge_id,
    external_charge_id: row.external_charge_id,
    debt_account_id: row.debt_account_id,
    type: row.kind,
    status: row.status,
    amount: Number(row.amount),
    return_code: row.return_code,
    submitted_at: row.submitted_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}
