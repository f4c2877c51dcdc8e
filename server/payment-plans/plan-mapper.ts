import type { components } from '../../generated/schema';
import type { InstalmentRow, PlanRow } from './plan-repo';

type Schemas = components['schemas'];

export function instalmentToApi(row: InstalmentRow): Schemas['PaymentPlanInstalment'] {
  return {
    id: row.id,
    charge_date: row.charge_date,
    amount: Number(row.amount),
    status: row.status,
    attempts: row.attempts,
    successfully_charged_at: row.successfully_charged_at?.toISOString() ?? null,
    error: row.error,
    error_code: row.error_code,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The plan with its schedule (`instalments` by charge date). */
export function planToApi(row: PlanRow, instalments: InstalmentRow[]): Schemas['PaymentPlanDetail'] {
  const live = instalments.filter((i) => i.status !== 'canceled');
  return {
    id: row.id,
    frequency: row.frequency,
    start_date: row.start_date,
    amount: row.amount === null ? null : Number(row.amount),
    status: row.status,
    debt_account_id: row.debt_account_id,
    payment_method_id: row.payment_method_id,
    end_date: live.length > 0 ? live[live.length - 1]!.charge_date : null,
    enrolled_at: row.enrolled_at?.toISOString() ?? null,
    canceled_at: row.canceled_at?.toISOString() ?? null,
    charges_total_amount: instalments.filter((i) => i.status === 'succeeded').reduce((sum, i) => sum + Number(i.amount), 0),
    charges: instalments.map(instalmentToApi),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
