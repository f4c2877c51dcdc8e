/**
 * Which gateway serves a tenant: the processor its organization configured for the environment
 * (`PUT /payment-processor`, read through payment-processors/processor-read.ts), else the
 * sandbox environment's simulator. Production with none configured moves no money (409
 * processor_not_configured), never a silent success, unless the deployment lets production use
 * the simulator (PAYMENT_GATEWAY=sandbox, demos only). One dispatch by processor name
 * (`adapterFor`): each processor's adapter is plugged in there.
 */
import type { Config } from '../kernel/config';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { processorOf, type Processor } from './processor-read';
import type { GatewayDeps, PaymentGateway } from './gateway';
import { sandboxGateway } from './sandbox-gateway';
import { stripeGateway } from './stripe/stripe-gateway';
import { scoped } from '../db/tenant';
import { authorizeNetGateway } from './authorize-net/authorize-net-gateway';
import { pacedFetch, pacedGateway } from './paced-gateway';
import { processorPace } from './processor-pace';

export type { GatewayDeps } from './gateway';

/** A gateway, or the sentence that says why there is none. */
type Resolved = { gateway: PaymentGateway } | { missing: string };

const NOT_CONFIGURED =
  'No payment processor is configured for production; no money was moved. Configure one with PUT /payment-processor (Stripe or Authorize.net credentials of the agency\'s merchant account).';

function simulator({ db, config, secrets }: GatewayDeps, tenant: Tenant): PaymentGateway {
  return sandboxGateway(db, tenant, secrets, {
    achSettlementSeconds: config.sandboxAchSettlementSeconds,
    latencyMs: config.sandboxGatewayLatencyMs,
    loseAnswerOfCents: config.testSandboxLoseAnswerCents,
  });
}

/**
 * The processor account's pace, shared by every process (processor-pace.ts): keyed by the
 * configuration's id, never by a credential. Each HTTP request to the processor takes a slot
 * (pacedFetch: a Stripe charge is a create and a confirm; Authorize.net's recovery reads several
 * lists), and the paced gateway waits out 429s, never failing a charge by them.
 */
function paced(deps: GatewayDeps, processor: Processor, adapter: (send: typeof fetch) => PaymentGateway): PaymentGateway {
  const pace = processorPace(deps.db, `processor:${processor.id}`, processor.rateLimitPerSecond);
  return pacedGateway(adapter(pacedFetch(pace)), pace, { slots: 'per-request' });
}

/** Authorize.net's endpoint on AUTHORIZE_NET_API_URL; on its default host, a sandbox tenant's is Authorize.net's sandbox (its keys work only there). */
function authorizeNetUrl(config: Config, tenant: Tenant): string {
  const base = config.authorizeNetApiUrl.replace(/\/+$/, '');
  const host = tenant.environment === 'sandbox' && base === 'https://api.authorize.net' ? 'https://apitest.authorize.net' : base;
  return `${host}/xml/v1/request.api`;
}

/** When a charge still `processing` was last sent (its row's last change), for Authorize.net's duplicate window. */
async function chargeSentAt({ db }: GatewayDeps, tenant: Tenant, chargeId: string): Promise<Date | undefined> {
  const row = (await scoped(db, 'charges', tenant).where({ id: chargeId, status: 'processing' }).first('updated_at')) as { updated_at: Date } | undefined;
  return row?.updated_at;
}

/** The one dispatch by processor name: the adapter of a saved processor. */
function adapterFor(deps: GatewayDeps, tenant: Tenant, processor: Processor): Resolved {
  switch (processor.name) {
    case 'sandbox':
      return { gateway: simulator(deps, tenant) };
    case 'stripe':
      return { gateway: paced(deps, processor, (send) => stripeGateway(deps, processor, { key: processor.id, fetch: send })) };
    case 'authorize_net': {
      const { api_login_id, transaction_key, signature_key } = processor.credentials;
      const credentials = { apiLoginId: api_login_id!, transactionKey: transaction_key!, signatureKey: signature_key! };
      // The processor runs on real time (not a sandbox clock); a charge's window runs from when it was sent.
      const options = { apiUrl: authorizeNetUrl(deps.config, tenant), timeoutMs: deps.config.processorTimeoutMs, sentAt: (chargeId: string) => chargeSentAt(deps, tenant, chargeId) };
      return { gateway: paced(deps, processor, (send) => authorizeNetGateway(credentials, { ...options, fetch: send })) };
    }
  }
}

async function resolve(deps: GatewayDeps, tenant: Tenant, made?: string): Promise<Resolved> {
  // A charge the simulator made is asked about in its own ledger, whatever is configured now.
  if (made === 'sandbox') return { gateway: simulator(deps, tenant) };
  const processor = await processorOf(deps, tenant);
  if (processor) {
    if (made && made !== processor.name) return { missing: `The charge was made through ${made}, which is no longer this organization's processor; nothing was asked of it.` };
    return adapterFor(deps, tenant, processor);
  }
  if (tenant.environment === 'sandbox' || deps.config.paymentGateway === 'sandbox') return { gateway: simulator(deps, tenant) };
  return { missing: NOT_CONFIGURED };
}

/**
 * The tenant's gateway, or undefined when it has none it can use. `made`: the gateway named on a
 * charge already made, for what concerns that charge (its void, refund, recovery, outcome). It
 * is asked with no transaction of ours open: `deps.db` must be the pool (the simulator refuses a
 * transaction).
 */
export async function gatewayFor(deps: GatewayDeps, tenant: Tenant, made?: string): Promise<PaymentGateway | undefined> {
  const resolved = await resolve(deps, tenant, made);
  return 'gateway' in resolved ? resolved.gateway : undefined;
}

/** The tenant's gateway, for a request that moves money: 409 processor_not_configured without one. */
export async function requireGateway(deps: GatewayDeps, tenant: Tenant, made?: string): Promise<PaymentGateway> {
  const resolved = await resolve(deps, tenant, made);
  if ('missing' in resolved) throw new ApiError('processor_not_configured', resolved.missing);
  return resolved.gateway;
}

/** Why the tenant has no gateway (the sentence a refused money-moving request answers), or undefined when it has one. */
export async function whyNoGateway(deps: GatewayDeps, tenant: Tenant): Promise<string | undefined> {
  const resolved = await resolve(deps, tenant);
  return 'missing' in resolved ? resolved.missing : undefined;
}
