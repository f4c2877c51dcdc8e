/** The guest's pages at the Portal's root: "Find my account", then the customer's accounts. */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import type { Environment, Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { startGuest, visitOf, type PortalScope, type Visit } from './browser-sessions';
import { browserSessionRepo, type BrowserSessionRow } from './browser-session-repo';
import { hashToken } from '../crypto/secrets';
import { readCookie, BROWSER_SESSION_COOKIE, deviceId } from './cookies';
import { guestFinder, NO_MATCH } from './guest';
import { PortalStop } from './page-error';
import type { Form, FormErrors } from './payment-form';
import { formErrorsOf } from './payment-form';
import { renderPage } from './render';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function guestRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const finder = guestFinder(deps);
  const base = scope.base;

  const render = (res: Response, visit: Pick<Visit, 'browser'>, status: number, form: Form, errors: FormErrors) =>
    renderPage(res, status, 'guest', 'Find my account', { base, csrf: visit.browser.csrf_token }, { form, errors, query: tenantQuery(visit.browser) });

  router.get('/', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    render(res, { browser }, 200, {}, {});
  });

  router.post('/find', async (req: Request, res: Response) => {
    const visit = await visitOf(deps, scope, req, res);
    if (visit.customerSession) throw new PortalStop(409, 'conflict', 'You are signed in', 'You opened a link from your creditor; your accounts are already here.', undefined, { href: `${base}/accounts`, text: 'See your accounts' });
    const form = req.body as Form;
    const answers = { phone: form.phone, first_name: form.first_name, last_name: form.last_name, ssn_last4: form.ssn_last4, date_of_birth: form.date_of_birth, postal_code: form.postal_code };
    try {
      if (await finder.find(visit, req.ip ?? 'unknown', answers)) return res.redirect(303, `${base}/accounts`);
      return render(res, visit, 422, keep(form), { form: NO_MATCH });
    } catch (error) {
      if (error instanceof ApiError && error.errorCode === 'rate_limited') {
        res.set(error.headers);
        return render(res, visit, 429, keep(form), { form: error.message });
      }
      if (error instanceof ApiError && error.status === 422) return render(res, visit, 422, keep(form), formErrorsOf(error.fieldErrors));
      throw error;
    }
  });

  return router;
}

/** The organization the root's query names (`?organization=<id>[&environment=sandbox]`), when it exists. */
export async function tenantOfQuery(deps: AppDeps, req: Request): Promise<Tenant> {
  const organization = String(req.query.organization ?? '');
  const environment: Environment = req.query.environment === 'sandbox' ? 'sandbox' : 'production';
  const known = UUID.test(organization) ? await deps.db('organizations').where({ id: organization }).first('id') : undefined;
  if (!known) {
    throw new PortalStop(404, 'not_found', 'Find my account', 'This address does not name an organization. Open the link your creditor sent you, or the Portal address on their letters.');
  }
  return { organizationId: organization, environment, tokenHash: '' };
}

/** A guest page's browser session: a guest's earlier visit to this organization goes on; anything else starts afresh. */
export async function guestBrowser(deps: AppDeps, scope: PortalScope, tenant: Tenant, req: Request, res: Response): Promise<BrowserSessionRow> {
  const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
  const known = cookie ? await browserSessionRepo(deps.db).findByTokenHash(hashToken(cookie)) : undefined;
  const same = known && !known.customer_session_id && known.organization_id === tenant.organizationId && known.environment === tenant.environment;
  const browser = same ? (await visitOf(deps, scope, req, res)).browser : await startGuest(deps, scope, tenant, res);
  deviceId(req, res, scope);
  return browser;
}

/** The query that names the browser session's organization on a guest page's links. */
export const tenantQuery = (browser: Pick<BrowserSessionRow, 'organization_id' | 'environment'>) =>
  `organization=${browser.organization_id}${browser.environment === 'sandbox' ? '&environment=sandbox' : ''}`;

/** What is shown again: the names and phone, never the SSN digits or the date of birth. */
function keep(form: Form): Form {
  return { phone: form.phone, first_name: form.first_name, last_name: form.last_name };
}
