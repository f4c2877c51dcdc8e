/**
 * What the late-arrival sweep does with what Authorize.net holds of ours: each transaction that
 * took money is matched to our charge by invoice number; a charge still `processing` is
 * recorded (recovery's `find()`), one that was released (failed) or recorded with another
 * transaction has its money given back (`takeBack()`). Decided here without I/O; the caller
 * reads the charges and acts.
 */
import { HELD, invoiceNumberOf, TAKEN } from './authorize-net-codes';
import type { Arrival } from './authorize-net-gateway';

/** A charge of ours as the sweep needs it. */
export interface SweptCharge {
  id: string;
  status: string;
  gatewayReference: string | null;
}

export interface SweepActions {
  /** Charges still `processing` that the processor holds: recover them now (find, then record). */
  record: string[];
  /** Transactions nobody records: give their money back, with `key` as the refund's invoice number. */
  takeBack: { chargeId: string; reference: string; key: string }[];
}

export function lateArrivalActions(arrivals: Arrival[], charges: SweptCharge[]): SweepActions {
  const byInvoice = new Map(charges.map((charge) => [invoiceNumberOf(charge.id), charge]));
  const actions: SweepActions = { record: [], takeBack: [] };
  for (const arrival of arrivals) {
    if (!TAKEN.has(arrival.status) && !HELD.has(arrival.status)) continue;
    const charge = byInvoice.get(arrival.invoiceNumber);
    // Not one of ours (a refund's invoice, another system's transaction on the same account).
    if (!charge) continue;
    if (charge.status === 'processing') {
      if (!actions.record.includes(charge.id)) actions.record.push(charge.id);
    } else if (charge.gatewayReference !== arrival.reference) {
      actions.takeBack.push({ chargeId: charge.id, reference: arrival.reference, key: `takeback:${arrival.reference}` });
    }
  }
  return actions;
}
