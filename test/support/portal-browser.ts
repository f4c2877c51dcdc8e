/**
 * A browser of the Portal without a browser, over plain HTTP: the session cookie from opening
 * a link's portal_url, the CSRF token, the Portal API's JSON calls, and the checkout form posted
 * as a browser posts it. For tests about what the server does with a request; tests of what a
 * person sees drive Chromium (test/portal/portal.test.ts).
 */
export interface PortalBrowser {
  cookie: string;
  csrf: string;
  /** A Portal API call (`/api` + path) with the cookie; a POST carries the CSRF token. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, any> }>;
  /** Opens the account's checkout, fills `fields` into its form (with its own payment key) and posts it. */
  payByForm(accountId: string, fields: Record<string, string>): Promise<{ status: number; location: string | null }>;
}

export async function openPortal(portalBase: string, portalUrl: string): Promise<PortalBrowser> {
  const entered = await fetch(portalUrl, { redirect: 'manual' });
  if (entered.status !== 303) throw new Error(`opening the link answered ${entered.status}`);
  const cookie = entered.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
  const session = await fetch(`${portalBase}/api/session`, { headers: { cookie } });
  if (session.status !== 200) throw new Error(`GET /api/session answered ${session.status}`);
  const csrf = session.headers.get('x-csrf-token')!;
  return {
    cookie,
    csrf,
    async call(method, path, body, headers = {}) {
      const response = await fetch(`${portalBase}/api${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    },
    async payByForm(accountId, fields) {
      const page = await fetch(`${portalBase}/accounts/${accountId}/checkout`, { headers: { cookie } });
      const html = await page.text();
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
      const form = new URLSearchParams({ _csrf: hidden('_csrf'), payment_key: hidden('payment_key'), policy: 'accepted', ...fields });
      const posted = await fetch(`${portalBase}/accounts/${accountId}/pay`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      return { status: posted.status, location: posted.headers.get('location') };
    },
  };
}
