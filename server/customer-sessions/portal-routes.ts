/**
 * The routes a person's browser opens, outside /api/v1: the Portal entry under the path of
 * PORTAL_URL and the short links under the path of SHORT_LINK_BASE_URL. No bearer token and
 * no API rate limit: the token or code in the path is the credential. Each router validates
 * against the Portal document's operations of its base (generated/portal.json), mounted at
 * its own path.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { loadPortalDocument, openApiValidator, portalDocumentAt, type PortalBase } from '../http/validator';
import { portalService, type Opened } from './portal-service';
import { mountPath, redactLinkCredentials } from './session-links';

const PORTAL_PAGES = [
  '/s/:token/accounts',
  '/s/:token/accounts/:accountId',
  '/s/:token/accounts/:accountId/checkout',
  '/s/:token/accounts/:accountId/documents',
  '/s/:token/disputes/:disputeId',
];

function answer(res: Response, opened: Opened): void {
  if ('redirect' in opened) res.redirect(302, opened.redirect);
  else res.json({ data: opened.data });
}

function validated(base: PortalBase, basePath: string): Router {
  const router = Router();
  router.use(openApiValidator(portalDocumentAt(loadPortalDocument(), base, basePath), { forLinks: true }));
  return router;
}

function portalEntryRouter(deps: AppDeps, basePath: string): Router {
  const portal = portalService(deps);
  const router = validated('portal', basePath);
  router.get(PORTAL_PAGES, async (req: Request, res) => {
    // The raw path, as the link was built: `/s/<token><page>`.
    const [, , token = '', ...page] = req.path.split('/');
    answer(res, await portal.openEntry(token, `/${page.join('/')}`));
  });
  return router;
}

function shortLinkRouter(deps: AppDeps, basePath: string): Router {
  const portal = portalService(deps);
  const router = validated('shortLinks', basePath);
  router.get('/:code', async (req, res) => {
    answer(res, await portal.followShortLink(req.params.code!));
  });
  return router;
}

export interface BrowserLinks {
  /** Where each router is mounted: the paths of SHORT_LINK_BASE_URL and PORTAL_URL. */
  mounts: { path: string; router: Router }[];
  /**
   * A request's path as it may be logged, its link credential replaced by `[redacted]`. The
   * app's request log must use it: only this module knows where in a path the credential sits.
   */
  logPath: (url: string) => string;
}

export function browserLinks(deps: AppDeps): BrowserLinks {
  const shortLinks = mountPath(deps.config.shortLinkBaseUrl);
  const portal = mountPath(deps.config.portalUrl);
  return {
    mounts: [
      { path: shortLinks || '/', router: shortLinkRouter(deps, shortLinks) },
      { path: portal || '/', router: portalEntryRouter(deps, portal) },
    ],
    logPath: redactLinkCredentials(deps.config),
  };
}
