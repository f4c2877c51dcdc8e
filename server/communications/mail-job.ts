/**
 * The durable mail job's side of the log: a queued row is sent as written (its From, Reply-To,
 * subject, text and headers: Message-ID and RFC 8058's one-click unsubscribe), and becomes
 * `sent`; with no SMTP_URL it is written to the service's log instead and becomes `logged`,
 * since nothing left. A row no longer queued (sent by an earlier run of this job) is left
 * alone. After the last retry a refused message is `failed`.
 */
import { countCommunication } from '../observability/metrics';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { Mail, SendMail } from '../mail/mailer';
import { nowFor, withClock } from '../kernel/clock';
import { communicationRepo, type CommunicationRow } from './communication-repo';

export function mailOf(row: Pick<CommunicationRow, 'from' | 'reply_to' | 'to' | 'subject' | 'text' | 'headers' | 'opt_out_url'>): Mail {
  // Rows written before the log kept headers carry only their opt-out link.
  const { 'Message-ID': messageId, ...headers } = row.headers ?? (row.opt_out_url ? { 'List-Unsubscribe': `<${row.opt_out_url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {});
  return {
    ...(row.from ? { from: row.from } : {}),
    ...(row.reply_to ? { replyTo: row.reply_to } : {}),
    ...(messageId ? { messageId } : {}),
    to: row.to,
    subject: row.subject,
    text: row.text,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

export interface Attempt {
  retryCount: number;
  retryLimit: number;
}

export async function deliverCommunication(deps: Pick<AppDeps, 'db' | 'clock' | 'logger' | 'config'>, send: SendMail, communicationId: string, attempt: Attempt): Promise<void> {
  const row = (await deps.db('communications').where({ id: communicationId }).first('organization_id', 'environment')) as Pick<CommunicationRow, 'organization_id' | 'environment'> | undefined;
  if (!row) return;
  const tenant: Tenant = await withClock(deps.db, { organizationId: row.organization_id, environment: row.environment, tokenHash: '' });
  const communications = communicationRepo(deps.db, tenant);
  const message = await communications.find(communicationId);
  if (!message || message.status !== 'queued') return;
  try {
    await send(mailOf(message));
  } catch (error) {
    if (attempt.retryCount < attempt.retryLimit) throw error;
    const now = nowFor(deps.clock, tenant);
    deps.logger.warn({ err: error, communicationId }, 'e-mail to a debtor failed after every retry');
    await communications.update(communicationId, { status: 'failed', reason: 'delivery_failed', error: String((error as Error).message ?? error).slice(0, 255), updated_at: now });
    countCommunication('failed', 'delivery_failed');
    return;
  }
  const now = nowFor(deps.clock, tenant);
  const status = deps.config.smtpUrl ? 'sent' : 'logged';
  await communications.update(communicationId, { status, sent_at: now, updated_at: now });
  countCommunication(status, message.reason);
}
