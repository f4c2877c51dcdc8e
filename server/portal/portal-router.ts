/**
 * The Portal, as this server serves it under the path of PORTAL_URL: security headers on
 * every answer, form and JSON bodies, the CSRF check on every POST, the link entry
 * (`/s/<token>/<page>`, validated against the document), the pages, the guest's root, the
 * Portal API, and one error handler that answers a page (or the API's error body).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { hashToken } from '../crypto/secrets';
import { ApiError } from '../kernel/errors';
import { fromValidator } from '../http/error-handler';
import { loadPortalDocument, openApiValidator, portalDocumentAt } from '../http/validator';
import { mountPath } from '../customer-sessions/customer-session-links';
import { browserSessionRepo } from './browser-session-repo';
import { enterByLink, type PortalScope } from './browser-sessions';
import { signedIn } from './access';
import { readCookie, rememberedOrganization, BROWSER_SESSION_COOKIE } from './cookies';
import { csrfMatches, csrfRefusal, csrfTokenOf } from './csrf';
import { guestRouter } from './guest-pages';
import { autopayRouter } from './autopay-pages';
import { documentRouter } from './document-pages';
import { ticketRouter } from './ticket-pages';
import { PortalStop } from './page-error';
import { optOutRouter } from './opt-out-pages';
import { pagesRouter } from './pages';
import { settlementRouter } from './settlement-pages';
import { disputePagesRouter } from './dispute-pages';
import { guestDisputeRouter } from './guest-dispute-pages';
import { portalApiRouter } from './portal-api';
import { portalFileForm } from './portal-uploads';
import { ORGANIZATION_LOCAL, renderPage } from './render';
import { securityHeaders } from './security-headers';
import { signInRouter } from './sign-in-pages';

/** The forms that take a file (multipart): read before the CSRF check, which finds `_csrf` among their parts. */
const FILE_FORMS = ['/accounts/:accountId/dispute', '/dispute-a-debt/accounts/:accountId'];

/** The link entries: one per destination, as customer-sessions/customer-session-links.ts builds them. */
const ENTRY_PAGES = ['/s/:token/accounts', '/s/:token/accounts/:accountId', '/s/:token/accounts/:accountId/checkout', '/s/:token/accounts/:accountId/documents', '/s/:token/disputes/:disputeId'];

const STYLESHEET = readFileSync(join(__dirname, 'assets', 'portal.css'), 'utf8');

export function portalScope(deps: AppDeps): PortalScope {
  const base = mountPath(deps.config.portalUrl);
  return { base, path: base || '/', secure: new URL(deps.config.portalUrl).protocol === 'https:' };
}

const isApi = (req: Request) => req.path.startsWith('/api/');

/** Every POST carries the browser session's token (a form's `_csrf`, the API's `X-CSRF-Token`). */
function csrfCheck(deps: AppDeps): RequestHandler {
  return async (req, _res, next) => {
    if (req.method !== 'POST') return next();
    try {
      const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
      const browser = cookie ? await browserSessionRepo(deps.db).findByTokenHash(hashToken(cookie)) : undefined;
      // Without a browser session the page says so (visitOf); with one, the token must match.
      if (browser && !csrfMatches(browser.csrf_token, csrfTokenOf(req))) {
        // The API's caller is told which token to send; a person, to reload the form.
        return next(isApi(req) ? csrfRefusal() : new PortalStop(403, 'csrf_token_invalid', 'Please try again', 'This form has expired. Go back, reload the page and submit it again.'));
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}

function portalErrors(deps: AppDeps, scope: PortalScope): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) return next(error);
    // A library's client error (an undecodable path, a body too large) is its status, as in the API.
    const apiError = error instanceof ApiError ? error : error instanceof PortalStop ? undefined : fromValidator(error);
    if (isApi(req)) return next(error instanceof PortalStop ? new ApiError(error.errorCode, error.message) : (apiError ?? error));
    const stop =
      error instanceof PortalStop
        ? error
        : apiError && apiError.status < 500
          ? new PortalStop(apiError.status, apiError.errorCode, apiError.errorCode === 'gone' ? 'This link has expired' : apiError.status === 404 ? 'Page not found' : 'Something is not right', apiError.message)
          : undefined;
    if (!stop) {
      deps.logger.error({ err: error }, 'Portal request failed');
      return renderPage(res, 500, 'message', 'Something went wrong', { base: scope.base }, { message: 'We could not complete this request. Please try again in a moment.' });
    }
    if (stop.redirect) return res.redirect(303, stop.redirect);
    if (apiError) res.set(apiError.headers);
    // The header of the visit's own pages (its "My accounts" and "Sign out"), while it has one.
    headerOf(deps, req)
      .then((header) => renderPage(res, stop.status, 'message', stop.title, { base: scope.base, ...header }, { message: stop.message, link: stop.link }))
      .catch(next);
  };
}

/** The header a stop's page shows: a signed-in visit's, when the cookie still names a customer it may show. */
async function headerOf(deps: AppDeps, req: Request): Promise<{ signedIn: boolean; csrf?: string }> {
  const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
  const browser = cookie ? await browserSessionRepo(deps.db).findByTokenHash(hashToken(cookie)) : undefined;
  if (!browser?.customer_id) return { signedIn: false };
  const session = browser.customer_session_id ? await deps.db('customer_sessions').where({ id: browser.customer_session_id }).first('verification') : undefined;
  return { signedIn: signedIn({ browser, customerSession: session as never }), csrf: browser.csrf_token };
}

export function portalRouter(deps: AppDeps): Router {
  const scope = portalScope(deps);
  const router = Router();
  router.use(securityHeaders(scope.secure));
  // The organization this browser last visited: a signed-out page's "Sign in" and "Find my account" lead there.
  router.use((req, res, next) => {
    const remembered = rememberedOrganization(req);
    if (remembered) res.locals[ORGANIZATION_LOCAL] = remembered;
    next();
  });
  router.get('/assets/portal.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('css').send(STYLESHEET);
  });
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 100 }));
  router.use('/api', express.json({ limit: '64kb' }));
  router.use(openApiValidator(portalDocumentAt(loadPortalDocument(), 'portal', scope.base), { forLinks: true }));
  // Before the CSRF check: the signed link is the opt-out's credential (RFC 8058's POST has no cookie).
  router.use(optOutRouter(deps, scope));
  router.post(FILE_FORMS, portalFileForm(deps));
  router.use(csrfCheck(deps));
  router.get(ENTRY_PAGES, async (req, res) => {
    // The raw path, as the link was built: `/s/<token><page>`.
    const [, , token = '', ...page] = req.path.split('/');
    await enterByLink(deps, scope, token, `/${page.join('/')}`, req, res);
  });
  router.use('/api', portalApiRouter(deps, scope));
  router.use(guestRouter(deps, scope));
  router.use(autopayRouter(deps, scope));
  router.use(signInRouter(deps, scope));
  router.use(documentRouter(deps, scope));
  router.use(ticketRouter(deps, scope));
  router.use(settlementRouter(deps, scope));
  router.use(disputePagesRouter(deps, scope));
  router.use(guestDisputeRouter(deps, scope));
  router.use(pagesRouter(deps, scope));
  // Mounted under a path of its own, nothing else lives there: an unknown page is our 404 page.
  // (At the root, what is not the Portal's falls through to the short links and the app.)
  if (scope.base) router.use((_req, _res, next) => next(new PortalStop(404, 'not_found', 'Page not found', 'There is no such page in the Portal.')));
  router.use(portalErrors(deps, scope));
  return router;
}
