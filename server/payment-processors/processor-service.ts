/**
 * Choosing a tenant's processor (`GET`/`PUT /payment-processor`): the credentials checked for
 * their shape and mode, then by one harmless call to the processor, sealed and saved; an answer
 * shows only the last four characters of each.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { processorRepo, type ProcessorRow } from '../gateway/processor-repo';
import { forgetProcessor } from '../gateway/processor-read';
import { stripeRefusal } from '../gateway/stripe/stripe-gateway';
import { CREDENTIAL_SHAPES, credentialErrors, lastFours } from './processor-credentials';
import { authorizeNetRefusal } from './authorize-net-check';

type PaymentProcessor = components['schemas']['PaymentProcessor'];
type PaymentProcessorUpdate = components['schemas']['PaymentProcessorUpdate'];

export type ProcessorDeps = Pick<AppDeps, 'db' | 'secrets' | 'config'>;

/** Where processors send their events for this configuration (served outside the bearer-token API, under the same base). */
export function webhookUrlOf(deps: Pick<AppDeps, 'config'>, id: string): string {
  return `${deps.config.publicUrl}/api/v1/processor-webhooks/${id}`;
}

function toApi(deps: ProcessorDeps, row: ProcessorRow): PaymentProcessor {
  const simulator = row.processor === 'sandbox';
  return {
    id: row.id,
    processor: row.processor,
    credentials: row.credentials_last4,
    rate_limit_per_second: simulator ? null : row.rate_limit_per_second,
    configured_at: row.configured_at.toISOString(),
    webhook_url: simulator ? null : webhookUrlOf(deps, row.id),
  };
}

/** What the processor says of the credentials: its refusal, or undefined when it accepts them. */
async function refusalOf(deps: ProcessorDeps, tenant: Tenant, body: PaymentProcessorUpdate): Promise<string | undefined> {
  const credentials = body.credentials ?? {};
  if (body.processor === 'stripe') return stripeRefusal(credentials.secret_key!, deps.config.stripeApiUrl, deps.config.processorTimeoutMs);
  if (body.processor === 'authorize_net') return authorizeNetRefusal(deps.config.authorizeNetApiUrl, tenant.environment, credentials.api_login_id!, credentials.transaction_key!, deps.config.processorTimeoutMs);
  return undefined;
}

export function paymentProcessorService(deps: ProcessorDeps) {
  return {
    async get(tenant: Tenant): Promise<PaymentProcessor> {
      const row = await processorRepo(deps.db, tenant).find();
      if (row) return toApi(deps, row);
      const simulated = tenant.environment === 'sandbox' || deps.config.paymentGateway === 'sandbox';
      return { id: null, processor: simulated ? 'sandbox' : null, credentials: {}, rate_limit_per_second: null, configured_at: null, webhook_url: null };
    },

    async set(tenant: Tenant, body: PaymentProcessorUpdate): Promise<PaymentProcessor> {
      const credentials = (body.credentials ?? {}) as Record<string, string>;
      const errors = credentialErrors(body.processor, body.credentials as Record<string, string> | undefined, tenant.environment);
      if (body.processor === 'sandbox' && tenant.environment === 'production' && deps.config.paymentGateway !== 'sandbox') {
        errors.processor = ['the simulator moves no real money: production takes stripe or authorize_net (PAYMENT_GATEWAY=sandbox lets demos use it)'];
      }
      if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
      const refusal = await refusalOf(deps, tenant, body);
      if (refusal) throw ApiError.invalid({ credentials: [refusal] });
      const row = await processorRepo(deps.db, tenant).save({
        processor: body.processor,
        credentials_sealed: deps.secrets.encrypt(JSON.stringify(credentials)),
        credentials_last4: lastFours(credentials),
        rate_limit_per_second: body.rate_limit_per_second ?? CREDENTIAL_SHAPES[body.processor].defaultRate(credentials),
      });
      forgetProcessor(tenant);
      return toApi(deps, row);
    },
  };
}
