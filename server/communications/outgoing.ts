/**
 * The one way a message reaches a debtor: written to the communications log in the caller's
 * transaction, with what Regulation F asks every e-mail to say (the organization's name and
 * contact, the debt-collector disclosure of FDCPA §807(11), the opt-out link of 12 CFR
 * 1006.6(e)), then opt-out and quiet hours (§1006.6(b)(1)(i)) decide whether it is queued for
 * the durable mail job, held, or suppressed. From, Reply-To and headers are decided here too
 * and kept on the row, so that the log shows what the wire carries.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { enqueueIn, QUEUES } from '../jobs/queue';
import { countCommunication } from '../observability/metrics';
import { readSettings } from '../settings/settings-service';
import type { Settings } from '../settings/settings-keys';
import { communicationRepo, type CommunicationReason, type CommunicationRow } from './communication-repo';
import { timeZonesOf } from './customer-time-zone';
import { isRequestedByDebtor, type CommunicationKind, type CommunicationStatus } from './message-kinds';
import { optOutUrl } from './opt-out-links';
import { quietUntil, type QuietRule } from './quiet-hours';
import { barredAddress, recipientOf, type Barred, type Recipient } from './recipients';
import { headersOf, senderOf } from './sender';

export type OutgoingDeps = Pick<AppDeps, 'boss' | 'config' | 'secrets'>;

export interface Message {
  customerId: string;
  debtAccountId?: string | null;
  kind: CommunicationKind;
  subject: string;
  /** The message itself; asked for only when the message is not suppressed (a reminder opens a customer session for its link). */
  body: string | (() => Promise<string>);
  /** Default: the customer's e-mail address. */
  to?: string;
  /** One message per key and tenant: a second write with the key writes nothing. */
  dedupeKey?: string;
  /** The tenant's time (the sandbox clock in a sandbox). */
  now: Date;
}

/** The mail job's work item: the log's row, sent as written. */
export interface CommunicationJob {
  communicationId: string;
}

export async function enqueueDelivery(deps: Pick<AppDeps, 'boss'>, trx: Knex.Transaction, communicationId: string): Promise<void> {
  const job: CommunicationJob = { communicationId };
  await enqueueIn(deps.boss, trx, QUEUES.email, job, { retryLimit: 3, retryDelay: 60, retryBackoff: true });
}

/** What every e-mail to a debtor says after the message itself. */
export function withFooter(body: string, settings: Settings & { organization_name: string }, optOut: string): string {
  const contact = [settings.contact_email, settings.contact_phone].filter(Boolean).join(', ');
  return [
    body.trimEnd(),
    '',
    settings.organization_name + (contact ? `\nContact: ${contact}` : ''),
    '',
    settings.debt_collector_disclosure,
    '',
    `To stop receiving these e-mails, open: ${optOut}`,
  ].join('\n');
}

interface Decision {
  status: CommunicationStatus;
  reason: CommunicationReason | null;
  held_until: Date | null;
}

/**
 * Never to a known work address (§1006.22(f)(3)); what the debtor asked for goes at once;
 * then opt-out (§1006.6(e)), then quiet hours in every zone the customer is known to be in
 * (§1006.6(b)(1)(i)).
 */
export function decide(kind: CommunicationKind, barred: Barred, quiet: QuietRule, now: Date): Decision {
  if (barred === 'work_address') return { status: 'suppressed', reason: 'work_address', held_until: null };
  if (isRequestedByDebtor(kind)) return { status: 'queued', reason: null, held_until: null };
  if (barred === 'opted_out') return { status: 'suppressed', reason: 'opted_out', held_until: null };
  const until = quietUntil(now, quiet);
  return until ? { status: 'held', reason: 'quiet_hours', held_until: until } : { status: 'queued', reason: null, held_until: null };
}

export function quietRuleOf(recipient: Recipient, settings: Pick<Settings, 'time_zone' | 'quiet_hours_no_overlap_hour'>): QuietRule {
  return { ...timeZonesOf(recipient, settings.time_zone), noOverlapHour: settings.quiet_hours_no_overlap_hour };
}

/**
 * Writes `message` to the log on `trx` and, when it may leave now, its mail job. Answers the
 * row, or undefined when its customer no longer exists or its key was already written.
 */
export async function sendToDebtor(deps: OutgoingDeps, trx: Knex.Transaction, tenant: Tenant, message: Message): Promise<CommunicationRow | undefined> {
  const recipient = await recipientOf(trx, tenant, message.customerId);
  if (!recipient) return undefined;
  const settings = await readSettings(trx, tenant);
  const to = message.to ?? recipient.email;
  const decision = decide(message.kind, await barredAddress(trx, tenant, recipient, to), quietRuleOf(recipient, settings), message.now);
  const body =
    decision.status === 'suppressed'
      ? `(not sent: ${decision.reason === 'work_address' ? 'a known work address' : 'the customer opted out of e-mail'})`
      : typeof message.body === 'string'
        ? message.body
        : await message.body();
  const id = randomUUID();
  const optOut = optOutUrl(deps.config.portalUrl, deps.secrets, tenant, id);
  const sender = senderOf(settings, deps.config.mailFrom);
  const row = await communicationRepo(trx, tenant).insert({
    id,
    customer_id: recipient.id,
    debt_account_id: message.debtAccountId ?? null,
    kind: message.kind,
    from: sender.from,
    reply_to: sender.replyTo,
    to,
    subject: message.subject,
    headers: headersOf(id, sender, optOut),
    text: withFooter(body, settings, optOut),
    ...decision,
    opt_out_url: optOut,
    dedupe_key: message.dedupeKey ?? null,
    created_at: message.now,
  });
  if (row?.status === 'queued') await enqueueDelivery(deps, trx, row.id);
  if (row) countCommunication(row.status, row.reason);
  return row;
}
