/**
 * What each processor's credentials are: their names, the rule the document's patterns cannot
 * say (a key's mode against the environment), and the processor's documented rate. One entry
 * per processor; the service and the gateways read only this.
 */
import type { Environment } from '../kernel/tenant';
import type { FieldErrors } from '../kernel/errors';
import type { ProcessorName } from '../gateway/processor-repo';

export interface StripeCredentials {
  secret_key: string;
  webhook_secret: string;
}

export interface AuthorizeNetCredentials {
  api_login_id: string;
  transaction_key: string;
  signature_key: string;
}

export type Credentials = Partial<StripeCredentials & AuthorizeNetCredentials>;

interface Shape {
  names: string[];
  /** 422 messages by field, for credentials of the right names. */
  check(credentials: Record<string, string>, environment: Environment): FieldErrors;
  /** Requests per second when none is set. */
  defaultRate(credentials: Record<string, string>): number;
}

export const CREDENTIAL_SHAPES: Record<ProcessorName, Shape> = {
  sandbox: { names: [], check: () => ({}), defaultRate: () => 1000 },
  stripe: {
    names: ['secret_key', 'webhook_secret'],
    check: ({ secret_key }, environment): FieldErrors => {
      const live = /^(sk|rk)_live_/.test(secret_key!);
      if (environment === 'sandbox' && live) return { 'credentials.secret_key': ['is a live-mode key; the sandbox environment takes a test-mode key (sk_test_…)'] };
      if (environment === 'production' && !live) return { 'credentials.secret_key': ['is a test-mode key; production takes a live-mode key (sk_live_…)'] };
      return {};
    },
    // Stripe's documented limits: 100 read and write requests per second in live mode, 25 in test mode.
    defaultRate: ({ secret_key }) => (/^(sk|rk)_live_/.test(secret_key!) ? 100 : 25),
  },
  authorize_net: {
    names: ['api_login_id', 'transaction_key', 'signature_key'],
    check: () => ({}),
    // Authorize.net publishes no rate; 10 per second stays well within what its support asks of
    // high-volume merchants, and is configurable.
    defaultRate: () => 10,
  },
};

/** The names a processor needs that are missing, and those it does not take. */
export function credentialErrors(processor: ProcessorName, credentials: Record<string, string> | undefined, environment: Environment): FieldErrors {
  const shape = CREDENTIAL_SHAPES[processor];
  const given = credentials ?? {};
  const errors: FieldErrors = {};
  if (shape.names.length === 0 && credentials && Object.keys(credentials).length > 0) errors.credentials = [`the ${processor} processor takes no credentials`];
  if (shape.names.length > 0 && !credentials) errors.credentials = [`are required for ${processor}: ${shape.names.join(', ')}`];
  for (const name of shape.names) if (credentials && !given[name]) errors[`credentials.${name}`] = [`is required for ${processor}`];
  for (const name of Object.keys(given)) if (!shape.names.includes(name)) errors[`credentials.${name}`] = [`is not a credential of ${processor}`];
  if (Object.keys(errors).length > 0) return errors;
  return shape.check(given, environment);
}

/** The last four characters of each credential: all an answer ever shows. */
export function lastFours(credentials: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(credentials).map(([name, value]) => [name, value.slice(-4)]));
}
