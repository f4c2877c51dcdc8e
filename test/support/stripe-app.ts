/**
 * The app with a sandbox token configured for Stripe's test mode (PUT /payment-processor)
 * against a local server that speaks Stripe's API (stripe-server.ts), reached through the
 * official SDK by STRIPE_API_URL: what every Stripe test file starts from.
 */
import type { ApiClient } from '../../client';
import type { Tenant } from '../../server/kernel/tenant';
import { startStripeServer, type StripeServer } from './stripe-server';
import { startTestApp, type TestApp } from './test-app';

export interface StripeApp {
  stripe: StripeServer;
  app: TestApp;
  /** The sandbox token's client. */
  api: ApiClient;
  tenant: Tenant;
  /** Where Stripe posts its events for this organization. */
  webhookUrl: string;
}

export async function startStripeApp(keys: { secretKey: string; webhookSecret: string }): Promise<StripeApp> {
  const stripe = await startStripeServer();
  stripe.acceptKey(keys.secretKey);
  const app = await startTestApp({ stripeApiUrl: stripe.url, processorTimeoutMs: 2000, webhookAllowInsecureUrls: true });
  app.config.publicUrl = app.origin;
  const api = app.sandbox;
  const tenant: Tenant = { organizationId: app.organization.organization_id, environment: 'sandbox', tokenHash: '' };
  const { data, response, error } = await api.PUT('/payment-processor', {
    body: { processor: 'stripe', credentials: { secret_key: keys.secretKey, webhook_secret: keys.webhookSecret } },
  });
  if (response.status !== 200) throw new Error(JSON.stringify(error));
  return { stripe, app, api, tenant, webhookUrl: data!.data.webhook_url! };
}
