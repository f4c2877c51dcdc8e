/**
 * Type tests, checked by `npm run typecheck` (never run): each `@ts-expect-error` line must
 * fail to compile, or tsc reports the directive as unused. They prove that the generated
 * types stop a wrong call before it is sent.
 */
import { createApiClient, type WebhookEventName, type WebhookPayload } from '../../client';

const api = createApiClient({ baseUrl: 'http://127.0.0.1:4010', token: 'token' });

export async function typeChecks(): Promise<void> {
  // A correct call compiles, and its answer is typed.
  const { data } = await api.POST('/customers', {
    body: { name: 'Dana Whitfield', email: 'dana.whitfield@mail.debt-collection.example' },
  });
  const name: string | undefined = data?.data.name;
  void name;

  // @ts-expect-error: no such path
  await api.GET('/customer');

  // @ts-expect-error: name is required on create
  await api.POST('/customers', { body: { email: 'dana.whitfield@mail.debt-collection.example' } });

  // @ts-expect-error: the collection has no DELETE
  await api.DELETE('/customers');

  // @ts-expect-error: limit is a number
  await api.GET('/customers', { params: { query: { limit: 'ten' } } });

  // @ts-expect-error: the path parameter id is required
  await api.GET('/customers/{id}', { params: { path: {} } });

  // @ts-expect-error: the events of a webhook are required
  await api.POST('/webhooks', { body: { url: 'https://hooks.acme-recovery.example/dcs' } });

  // @ts-expect-error: not an event name
  await api.POST('/webhooks/trigger', { body: { events: ['customer.created'] } });
}

export function payloadChecks(payload: WebhookPayload<'customer.create'>): string {
  const event: WebhookEventName = 'debt-account.update';
  void event;
  // @ts-expect-error: not an event name
  const wrong: WebhookEventName = 'customer.created';
  void wrong;
  return payload.data.name;
}
