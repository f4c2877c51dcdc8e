/**
 * One job of the delivery worker: what to send for it, or what else to do with it, and the
 * sending itself (signed with the webhook's secrets, opened once per webhook and kept while
 * the sealed value is unchanged).
 */
import type { Config } from '../kernel/config';
import type { SecretBox } from '../crypto/secrets';
import type { Logger } from 'pino';
import { DEFER_SECONDS, isTestJob } from './delivery-jobs';
import type { DeliveryTarget, Hook } from './delivery-repo';
import type { Job, Outcome } from './delivery-recording';
import { postWebhook, type AttemptResult } from './sender';
import { signedRequest } from './signing';

export interface Attempt {
  deliveryId: string;
  webhookId: string;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  event: string;
  /** The payload's JSON text (a stored event), or the payload (a test delivery). */
  dataJson?: string;
  data?: unknown;
  slow: boolean;
}

/** The job waits for the delivery `waitFor` in hand in this process (the one before it of its object). */
export interface Waiting {
  waitFor: string;
  target: DeliveryTarget;
}

export const attemptOf = (target: DeliveryTarget): Attempt => ({
  deliveryId: target.deliveryId,
  webhookId: target.webhookId,
  url: target.url,
  secretSealed: target.secretSealed,
  previousSecretSealed: target.previousSecretSealed,
  event: target.event,
  dataJson: target.dataJson,
  slow: target.slow,
});

/**
 * What to send for a job, or what else to do with it: skip it (webhook deleted, delivery done
 * already), cancel it (webhook disabled), or defer it (an earlier delivery of the same object
 * to the same webhook is still under way: deliveries of one object keep their order). A job
 * whose predecessor is in hand here, or was just recorded final here (`inHand`), waits for it instead.
 */
export function prepare(job: Job, targets: Map<string, DeliveryTarget>, hooks: Map<string, Hook>, inHand: (deliveryId: string) => boolean): Attempt | Outcome | Waiting {
  const data = job.data;
  const skip: Outcome = { job, kind: 'skip' };
  if (isTestJob(data)) {
    const hook = hooks.get(data.test.webhookId);
    if (!hook) return skip;
    return { deliveryId: data.test.deliveryId ?? job.id, webhookId: hook.id, url: hook.url, secretSealed: hook.secret_sealed, previousSecretSealed: hook.previous_secret_sealed, event: data.test.event, data: data.test.data, slow: false };
  }
  const target = targets.get(data.deliveryId);
  // A finished delivery, or an attempt already made (the job ran before, then its worker died).
  if (!target || target.finished || target.attempts !== data.attempt - 1) return skip;
  if (target.disabled) return { job, kind: 'cancel' };
  if (target.blockerId && inHand(target.blockerId)) return { waitFor: target.blockerId, target };
  if (target.blockedUntil) {
    const wait = Math.ceil((new Date(target.blockedUntil).getTime() - Date.now()) / 1000);
    return { job, kind: 'defer', deferSeconds: Math.min(3600, Math.max(DEFER_SECONDS, wait)), slow: target.slow, webhookId: target.webhookId };
  }
  return attemptOf(target);
}

export function attemptSender(config: Pick<Config, 'webhookTimeoutMs' | 'webhookAllowInsecureUrls'>, secrets: SecretBox, log: Logger) {
  const opened = new Map<string, { sealed: string; secret: string }>();
  const secretOf = (key: string, sealed: string): string => {
    const cached = opened.get(key);
    if (cached?.sealed === sealed) return cached.secret;
    if (opened.size > 10_000) opened.clear();
    const secret = secrets.decrypt(sealed);
    opened.set(key, { sealed, secret });
    return secret;
  };

  return async function send(attempt: Attempt): Promise<AttemptResult> {
    let secret: string;
    let previous: string | undefined;
    try {
      secret = secretOf(attempt.webhookId, attempt.secretSealed);
      previous = attempt.previousSecretSealed ? secretOf(`${attempt.webhookId}:previous`, attempt.previousSecretSealed) : undefined;
    } catch (error) {
      log.error({ err: error, webhook: attempt.webhookId }, 'cannot open a webhook secret (DATA_ENCRYPTION_KEY changed?)');
      return { ok: false, status: null, error: 'the webhook secret could not be opened' };
    }
    const { headers, body } = signedRequest(attempt, previous ? [secret, previous] : [secret]);
    return postWebhook(attempt.url, headers, body, { timeoutMs: config.webhookTimeoutMs, allowInsecure: config.webhookAllowInsecureUrls });
  };
}
