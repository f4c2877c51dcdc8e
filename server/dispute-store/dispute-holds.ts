/**
 * Whether an open dispute holds collection: the one statement of the rule, read by the
 * dispute's own `hold`, the debt account's reads and the payment terms' fact (disputes/).
 * `all`: every open dispute; `validation_period`: only one in writing within the validation
 * period (12 CFR 1006.38(d)(2): the collector must stop only then).
 */
import type { components } from '../../generated/schema';
import { OPEN_STATUSES, type DisputeRow } from './dispute-repo';

export type DisputeHoldPolicy = components['schemas']['Settings']['dispute_hold'];

export function holds(dispute: Pick<DisputeRow, 'status' | 'in_writing' | 'within_validation_period'>, policy: DisputeHoldPolicy): boolean {
  if (!OPEN_STATUSES.includes(dispute.status)) return false;
  return policy === 'all' || (dispute.in_writing && dispute.within_validation_period);
}
