/**
 * Authorize.net's harmless call, `authenticateTestRequest`, on its documented JSON API (one
 * request: the SDK's controller for it adds nothing here). Its adapter lives beside the gateway;
 * this only checks credentials before they are saved.
 */
import type { Environment } from '../kernel/tenant';

/** Authorize.net's sandbox host, for the sandbox environment when AUTHORIZE_NET_API_URL is its production default. */
const SANDBOX_HOST = 'https://apitest.authorize.net';
const PRODUCTION_HOST = 'https://api.authorize.net';

export function authorizeNetEndpoint(apiUrl: string, environment: Environment): string {
  const base = environment === 'sandbox' && apiUrl === PRODUCTION_HOST ? SANDBOX_HOST : apiUrl;
  return `${base}/xml/v1/request.api`;
}

/** Authorize.net's refusal of the credentials, or undefined when it accepts them. */
export async function authorizeNetRefusal(apiUrl: string, environment: Environment, name: string, transactionKey: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(authorizeNetEndpoint(apiUrl, environment), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ authenticateTestRequest: { merchantAuthentication: { name, transactionKey } } }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    // Its answers begin with a byte order mark.
    const answer = JSON.parse((await response.text()).replace(/^\uFEFF/, '')) as { messages?: { resultCode?: string; message?: { code?: string; text?: string }[] } };
    if (answer.messages?.resultCode === 'Ok') return undefined;
    const message = answer.messages?.message?.[0];
    return `Authorize.net refused the credentials: ${message?.text ?? 'no reason given'}${message?.code ? ` (${message.code})` : ''}`;
  } catch (error) {
    return `Authorize.net could not be reached to check the credentials (${(error as Error).message}); nothing was saved.`;
  }
}
