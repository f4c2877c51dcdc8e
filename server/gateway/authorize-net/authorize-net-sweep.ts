/**
 * What the late-arrival sweep does with what Authorize.net holds of ours: each transaction that
 * took money is matched to our charge by invoice number; a charge still `processing` is
 * recorded (recovery's `find()`), one that was released (failed) or recorded with another
 * transaction has its money given back (`takeBack()`). Decided here without I/O; the caller
 * reads the charges and acts.
 */
import { HELD, invoiceNumberOf, TAKEN } from './authorize-net-codes';
import type { Arrival, AuthorizeNetGateway } from './authorize-net-gateway';

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

export interface SweepDeps {
  gateway: Pick<AuthorizeNetGateway, 'arrivalsSince' | 'takeBack'>;
  /** Our charges that may carry these invoice numbers (those made since a day before `since`). */
  chargesSince(since: Date): Promise<SweptCharge[]>;
  /** Recovery's own path for one charge (`recoverCharge`): find, then record. */
  recover(chargeId: string): Promise<unknown>;
}

/**
 * One round of the late-arrival sweep for one merchant account: what the processor holds of
 * ours since `since`, matched to our charges; the processing ones recovered, the released ones'
 * money given back. Safe to run from any number of processes at once (a void or a refund with
 * the same key again does nothing more). Answers what it did.
 */
export async function sweepLateArrivals(deps: SweepDeps, since: Date): Promise<{ recovered: string[]; takenBack: { chargeId: string; reference: string; result: string }[] }> {
  const arrivals = await deps.gateway.arrivalsSince(since);
  if (arrivals.length === 0) return { recovered: [], takenBack: [] };
  const actions = lateArrivalActions(arrivals, await deps.chargesSince(new Date(since.getTime() - 86_400_000)));
  for (const chargeId of actions.record) await deps.recover(chargeId);
  const takenBack = [];
  for (const each of actions.takeBack) takenBack.push({ chargeId: each.chargeId, reference: each.reference, result: await deps.gateway.takeBack(each.reference, each.key) });
  return { recovered: actions.record, takenBack };
}
