/**
 * The durable mail job's side of the log: a queued row is sent as written, with RFC 8058's
 * one-click unsubscribe headers, and becomes `sent` (with no SMTP_URL, written to the service's
 * log, which counts as sent). A row no longer queued (sent by an earlier run of this job) is
 * left alone. After the last retry a refused message is `failed`.
 */
import { countCommunication } from '../observability/metrics';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { Mail, SendMail } from '../mail/mailer';
import { nowFor, withClock } from '../kernel/clock';
import { communicationRepo, type CommunicationRow } from './communication-repo';

export function mailOf(row: Pick<CommunicationRow, 'to' | 'subject' | 'text' | 'opt_out_url'>): Mail {
  return {
    to: row.to,
    subject: row.subject,
    text: row.text,
    ...(row.opt_out_url ? { headers: { 'List-Unsubscribe': `<${row.opt_out_url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } } : {}),
  };
}

export interface Attempt {
  retryCount: number;
  retryLimit: number;
}

export async function deliverCommunication(deps: Pick<AppDeps, 'db' | 'clock' | 'logger'>, send: SendMail, communicationId: string, attempt: Attempt): Promise<void> {
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
  await communications.update(communicationId, { status: 'sent', sent_at: now, updated_at: now });
  countCommunication('sent', message.reason);
}
