/**
 * What a processor reports of a payment by itself, applied as our own answer would be: a
 * `processing` charge (its answer lost, or late) finished through the one path that records
 * answers (charge-steps.ts: whoever records first is the only one), a pending ACH debit settled
 * or returned through the existing settlement flow (ach-settlement.ts), a held card payment
 * that failed after all recorded as a decline there too.
 */
import type { Tenant } from '../kernel/tenant';
import { nowFor, withClock } from '../kernel/clock';
import type { ChargeRow } from '../charge-store/charge-repo';
import type { ProcessorNotice } from '../gateway/processor-notices';
import type { PaymentDeps } from '../payments/payment-deps';
import { recordAnswer } from '../payments/charge-steps';
import { recordAchOutcome } from '../payments/ach-settlement';

/** When to ask again about an ACH debit a notice finished before its own answer was recorded (its settlement job). */
const ACH_CHECK_AFTER_SECONDS = 86_400;

type PaymentNotice = Extract<ProcessorNotice, { kind: 'payment.succeeded' | 'payment.failed' | 'ach.returned' }>;

export async function applyPaymentNotice(deps: PaymentDeps, tenant: Tenant, charge: ChargeRow, notice: PaymentNotice): Promise<void> {
  const now = nowFor(deps.clock, await withClock(deps.db, tenant));
  const { reference } = notice;
  if (charge.status === 'processing') {
    if (notice.kind === 'payment.succeeded') {
      const ach = charge.payment_method_type === 'ach';
      await recordAnswer(deps, tenant, charge.id, ach ? { status: 'pending', reference, checkAfterSeconds: ACH_CHECK_AFTER_SECONDS } : { status: 'succeeded', reference }, now);
      if (ach) await deps.db.transaction((trx) => recordAchOutcome(deps, trx, tenant, charge.id, { status: 'settled' }));
    } else {
      const code = notice.kind === 'payment.failed' ? notice.code : 'processing_error';
      await recordAnswer(deps, tenant, charge.id, { status: 'failed', reference, code, message: notice.message }, now);
    }
    return;
  }
  if (charge.status !== 'pending') return;
  if (notice.kind === 'payment.succeeded') await deps.db.transaction((trx) => recordAchOutcome(deps, trx, tenant, charge.id, { status: 'settled' }));
  else if (notice.kind === 'ach.returned') await deps.db.transaction((trx) => recordAchOutcome(deps, trx, tenant, charge.id, { status: 'returned', code: notice.code, message: notice.message }));
  // A held card payment declined after all: a decline, the money it counted owed again.
  else if (charge.payment_method_type !== 'ach') await deps.db.transaction((trx) => recordAchOutcome(deps, trx, tenant, charge.id, { status: 'failed', code: notice.code, message: notice.message }));
}
