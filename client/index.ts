/**
 * The typed client of the Debt Collection Service: openapi-fetch over the generated types.
 *
 *   const api = createApiClient({ baseUrl: 'https://<org>.api.debt-collection.example/api/v1', token });
 *   const { data, error } = await api.GET('/customers/{id}', { params: { path: { id } } });
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from '../generated/schema';

export type ApiClient = Client<paths>;
export type ApiError = components['schemas']['Error'];
export type Schemas = components['schemas'];

export interface ApiClientOptions {
  /** The environment's base URL, ending in /api/v1. */
  baseUrl: string;
  /** The access token of one organization in one environment. */
  token: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

/** Sends the bearer token on every request. */
export function authMiddleware(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}

/**
 * Keeps `error` in the spec's `{error, errorCode}` shape even when something between the
 * caller and the service (a proxy, a load balancer) answers a failure that is not JSON.
 */
export const errorShapeMiddleware: Middleware = {
  async onResponse({ response }) {
    if (response.ok || (response.headers.get('content-type') ?? '').includes('application/json')) return response;
    const body: ApiError = {
      error: `HTTP ${response.status} ${response.statusText}`.trim(),
      errorCode: response.status >= 500 ? 'internal_error' : 'bad_request',
    };
    const headers = new Headers(response.headers);
    headers.set('content-type', 'application/json');
    return new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
  },
};

export function createApiClient({ baseUrl, token, fetch }: ApiClientOptions): ApiClient {
  const client = createClient<paths>({ baseUrl, ...(fetch ? { fetch } : {}) });
  client.use(authMiddleware(token), errorShapeMiddleware);
  return client;
}

export * from './webhooks';
