/**
 * Which gateway serves a tenant: the sandbox environment always uses the simulator;
 * production uses the one PAYMENT_GATEWAY names, and without one it moves no money
 * (400 payment_gateway_unavailable), never a silent success.
 */
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import type { PaymentGateway } from './gateway';
import { sandboxGateway } from './sandbox-gateway';

export interface GatewayDeps {
  db: Knex;
  config: Config;
  secrets: SecretBox;
}

/**
 * The tenant's gateway, or undefined when production has none configured. It is asked with no
 * transaction of ours open: `deps.db` must be the pool (the simulator refuses a transaction).
 */
export function gatewayFor({ db, config, secrets }: GatewayDeps, tenant: Tenant): PaymentGateway | undefined {
  const name = tenant.environment === 'sandbox' ? 'sandbox' : config.paymentGateway;
  if (name === 'sandbox') {
    return sandboxGateway(db, tenant, secrets, {
      achSettlementSeconds: config.sandboxAchSettlementSeconds,
      latencyMs: config.sandboxGatewayLatencyMs,
      loseAnswerOfCents: config.testSandboxLoseAnswerCents,
    });
  }
  return undefined;
}

/** The tenant's gateway, for a request that moves money. */
export function requireGateway(deps: GatewayDeps, tenant: Tenant): PaymentGateway {
  const gateway = gatewayFor(deps, tenant);
  if (!gateway) {
    throw new ApiError('payment_gateway_unavailable', 'No payment gateway is configured for production; no money was moved.');
  }
  return gateway;
}
