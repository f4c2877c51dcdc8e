/**
 * The background workers every server process runs. Each handler must be safe to run twice
 * for one job: pg-boss retries a job whose worker died.
 */
import type { AppDeps } from './deps';
import { runNoticeJob, type NoticeJob } from './validation-notices/bulk-notices';
import { resumePendingBulkActions, runBulkImport, type BulkJob } from './bulk/bulk-import';
import { createMailer, type Mail } from './mail/mailer';
import { deliverCommunication } from './communications/mail-job';
import type { CommunicationJob } from './communications/outgoing';
import { startWebhookWorker } from './webhooks/delivery-worker';
import { startOutboxRetention } from './webhooks/retention';
import { startWebhookHealth } from './webhooks/webhook-health';
import { runRecovery, type RecoveryJob } from './webhooks/recovery';
import { QUEUES } from './jobs/queue';
import { registerWorker } from './jobs/wake';
import { startPlanScheduler } from './payment-plans/plan-scheduler';
import { listenToPayments } from './payment-plans/plan-listeners';
import { listenToCheckouts } from './portal/checkout-charges';
import { listenToAutopayCharges } from './autopay/autopay-outcome';
import { listenForSettlements } from './settlement-offers/offer-listeners';
import { withOfferExpiry } from './settlement-offers/offer-expiry';
import { planPorts } from './payment-plans/plan-charges';
import { settleAch, type SettlementJob } from './payments/ach-settlement';
import { withAutopay } from './autopay/autopay-due';
import { startChargeRecovery } from './payments/charge-recovery';
import { startProcessorReads } from './processor-notices/processor-reads';

export interface Workers {
  /** Stops taking work and lets what is in hand finish; call before stopping the queue. */
  stop(): Promise<void>;
}

export async function startWorkers(deps: AppDeps): Promise<Workers> {
  const { boss } = deps;
  listenToPayments();
  listenForSettlements();
  listenToCheckouts();
  listenToAutopayCharges(deps);
  const bulkWorker = await boss.work<BulkJob>(QUEUES.bulkImport, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
    await runBulkImport(deps, job!.data);
  });
  registerWorker(boss, QUEUES.bulkImport, bulkWorker);
  // A process killed mid-import leaves its job "active" until pg-boss expires it; this start
  // takes the work up again at once (rows are claimed one chunk at a time, so two runners at
  // once are safe).
  await resumePendingBulkActions(deps);
  const send = createMailer(deps.config, deps.logger);
  // One mail job: a message to a debtor names its row of the communications log (sent as
  // written there); other mail (to the organization) carries itself.
  await boss.work<Mail | CommunicationJob>(QUEUES.email, { pollingIntervalSeconds: 2, includeMetadata: true }, async ([job]) => {
    const data = job!.data;
    if ('communicationId' in data) await deliverCommunication(deps, send, data.communicationId, job!);
    else await send(data);
  });
  await boss.work<NoticeJob>(QUEUES.validationNotice, { pollingIntervalSeconds: 2 }, async ([job]) => {
    await runNoticeJob(deps, job!.data);
  });
  await boss.work<SettlementJob>(QUEUES.achSettlement, { pollingIntervalSeconds: 2 }, async ([job]) => {
    await settleAch(deps, job!.data);
  });
  await startOutboxRetention(deps);
  await startWebhookHealth(deps);
  await boss.work<RecoveryJob>(QUEUES.webhookRecovery, { pollingIntervalSeconds: 1 }, async ([job]) => {
    await runRecovery(deps, job!.data);
  });
  await startPlanScheduler(deps, withOfferExpiry(withAutopay(deps, planPorts(deps)), deps));
  await startChargeRecovery(deps);
  await startProcessorReads(deps);
  const webhooks = startWebhookWorker(deps);
  // Before the server listens: every delivery it queues gets this configuration's lease.
  await webhooks.ready;
  return { stop: () => webhooks.stop() };
}
