/**
 * The kinds of messages to a debtor, and which of them the debtor asked for at that moment
 * (12 CFR 1006.6(e) lets a consumer opt out of a collector's e-mail; a receipt of a payment or a
 * password link they requested is an answer to them, not a collection communication they opted
 * out of): those are sent at once, whatever the hour, also after an opt-out.
 */
import type { components } from '../../generated/schema';

export type CommunicationKind = components['schemas']['CommunicationKind'];
export type CommunicationStatus = components['schemas']['CommunicationStatus'];

const REQUESTED_BY_DEBTOR: ReadonlySet<CommunicationKind> = new Set<CommunicationKind>(['receipt', 'account_security']);

export function isRequestedByDebtor(kind: CommunicationKind): boolean {
  return REQUESTED_BY_DEBTOR.has(kind);
}
