/**
 * A processor's webhook, as a rule: the configuration its URL names, the processor's signature
 * checked (a bad one changes nothing), then the notice applied once. Each kind is applied under
 * the locks and state checks of the flow it belongs to, so applying it again changes nothing;
 * the notice's own id is kept besides, and a repeat is answered without reading further.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { UUID } from '../db/tenant';
import { chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import { processorWithId, type Processor } from '../gateway/processor-read';
import { parseNotice, type NoticeHeaders } from '../gateway/notice-parsers';
import { NoticeSignatureInvalid, type ProcessorNotice } from '../gateway/processor-notices';
import type { PaymentDeps } from '../payments/payment-deps';
import { applyPaymentNotice } from './payment-notices';
import { closeChargeback, openChargeback } from './chargebacks';

const PROCESSOR_NOTICES = 'processor_notices';

/** The charge a notice concerns: ours by the id the processor carried, else by the processor's id of the payment. */
async function chargeOf(db: Knex, tenant: Tenant, notice: ProcessorNotice): Promise<ChargeRow | undefined> {
  const charges = chargeRepo(db, tenant);
  const byId = notice.chargeId && UUID.test(notice.chargeId) ? await charges.find(notice.chargeId) : undefined;
  return byId ?? (notice.reference ? await charges.findByGatewayReference(notice.reference) : undefined);
}

async function apply(deps: PaymentDeps, tenant: Tenant, notice: ProcessorNotice): Promise<string | undefined> {
  if (notice.kind === 'ignored') return undefined;
  const charge = await chargeOf(deps.db, tenant, notice);
  // A payment of the processor account that is not ours (another system shares the account).
  if (!charge) return undefined;
  switch (notice.kind) {
    case 'payment.succeeded':
    case 'payment.failed':
    case 'ach.returned':
      await applyPaymentNotice(deps, tenant, charge, notice);
      break;
    case 'chargeback.opened':
      await openChargeback(deps, tenant, charge, notice);
      break;
    case 'chargeback.won':
    case 'chargeback.lost':
      await closeChargeback(deps, tenant, charge, notice);
      break;
  }
  return charge.id;
}

/** Receives one delivery to `processor-webhooks/{configurationId}`; throws 404 or 400 (bad signature) as ApiErrors. */
export async function receiveNotice(deps: PaymentDeps, configurationId: string, rawBody: Buffer, headers: NoticeHeaders): Promise<void> {
  const processor = UUID.test(configurationId) ? await processorWithId(deps, configurationId) : undefined;
  if (!processor) throw ApiError.notFound('Payment processor configuration');
  let notice: ProcessorNotice;
  try {
    notice = parseNotice(processor, rawBody, headers);
  } catch (error) {
    if (error instanceof NoticeSignatureInvalid) throw new ApiError('bad_request', error.message);
    throw error;
  }
  await applyNotice(deps, processor, notice);
}

/**
 * Applies one notice of `processor` (delivered to its webhook, or read from its reports by
 * processor-reads.ts) unless its id was applied already; answers whether it was new. Whichever
 * way a payment's news comes, each flow's own state checks apply it once.
 */
export async function applyNotice(deps: PaymentDeps, processor: Processor, notice: ProcessorNotice): Promise<boolean> {
  const seen = await deps.db(PROCESSOR_NOTICES).where({ processor_id: processor.id, notice_id: notice.noticeId }).first('notice_id');
  if (seen) return false;
  const tenant: Tenant = { organizationId: processor.organizationId, environment: processor.environment, tokenHash: '' };
  const chargeId = await apply(deps, tenant, notice);
  await deps.db(PROCESSOR_NOTICES).insert({ processor_id: processor.id, notice_id: notice.noticeId, kind: notice.kind, charge_id: chargeId ?? null }).onConflict(['processor_id', 'notice_id']).ignore();
  return true;
}
