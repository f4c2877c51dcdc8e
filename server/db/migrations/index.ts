/**
 * Migrations are listed here, in order, rather than found on disk, so that the same code
 * runs under tsx, jest and a compiled build alike.
 */
import type { Knex } from 'knex';
import * as initial from './001-initial';
import * as debtAccounts from './002-debt-accounts';
import * as customerSessions from './003-customer-sessions';
import * as bulk from './004-bulk';
import * as webhooks from './005-webhooks';
import * as payments from './007-payments';
import * as locationCounter from './008-location-counter';
import * as outboxRetention from './009-outbox-retention';
import * as paymentPlans from './010-payment-plans';
import * as scheduledCharges from './011-scheduled-charges';
import * as portal from './012-portal';
import * as idempotencyScope from './013-idempotency-scope';
import * as webhookTrust from './015-webhook-trust';
import * as communications from './016-communications';
import * as chargeSteps from './017-charge-steps';
import * as disputes from './018-disputes';
import * as settlementOffers from './019-settlement-offers';
import * as documentsTickets from './020-documents-tickets';
import * as portalLogins from './021-portal-logins';
import * as autopayAndExternalCharges from './022-autopay-and-external-charges';
import * as portalCheckoutCharges from './023-portal-checkout-charges';
import * as disputeRecordsKept from './024-dispute-records-kept';
import * as settlementReversals from './025-settlement-reversals';
import * as webhookLanesCompactEvents from './026-webhook-lanes-compact-events';
import * as autopayRunsInFlight from './027-autopay-runs-in-flight';
import * as payloadReadIndexes from './029-payload-read-indexes';
import * as portalResetLimits from './032-portal-reset-limits';
import * as paymentProcessors from './040-payment-processors';
import * as processorPaces from './055-processor-paces';
import * as validationNotices from './060-validation-notices';
import * as emailAddresses from './065-email-addresses';
import * as disputesFollowAccounts from './085-disputes-follow-accounts';

const migrations: Record<string, Knex.Migration> = {
  '001-initial': initial,
  '002-debt-accounts': debtAccounts,
  '003-customer-sessions': customerSessions,
  '004-bulk': bulk,
  '005-webhooks': webhooks,
  '007-payments': payments,
  '008-location-counter': locationCounter,
  '009-outbox-retention': outboxRetention,
  '010-payment-plans': paymentPlans,
  '011-scheduled-charges': scheduledCharges,
  '012-portal': portal,
  '013-idempotency-scope': idempotencyScope,
  '015-webhook-trust': webhookTrust,
  '016-communications': communications,
  '017-charge-steps': chargeSteps,
  '018-disputes': disputes,
  '019-settlement-offers': settlementOffers,
  '020-documents-tickets': documentsTickets,
  '021-portal-logins': portalLogins,
  '022-autopay-and-external-charges': autopayAndExternalCharges,
  '023-portal-checkout-charges': portalCheckoutCharges,
  '024-dispute-records-kept': disputeRecordsKept,
  '025-settlement-reversals': settlementReversals,
  '026-webhook-lanes-compact-events': webhookLanesCompactEvents,
  '027-autopay-runs-in-flight': autopayRunsInFlight,
  '029-payload-read-indexes': payloadReadIndexes,
  '032-portal-reset-limits': portalResetLimits,
  '040-payment-processors': paymentProcessors,
  '055-processor-paces': processorPaces,
  '060-validation-notices': validationNotices,
  '065-email-addresses': emailAddresses,
  '085-disputes-follow-accounts': disputesFollowAccounts,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name]!,
};
