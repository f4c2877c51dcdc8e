/**
 * The short links a person's browser opens, outside /api/v1, under the path of
 * SHORT_LINK_BASE_URL: no bearer token and no API rate limit (the code in the path is the
 * credential), validated against the Portal document's short-link operation. The Portal itself
 * (PORTAL_URL) is server/portal.
 */
import { Router } from 'express';
import type { AppDeps } from '../deps';
import { loadPortalDocument, openApiValidator, portalDocumentAt } from '../http/validator';
import { linkEntry } from './link-entry';
import { mountPath, redactLinkCredentials } from '../customer-sessions/customer-session-links';

function shortLinkRouter(deps: AppDeps, basePath: string): Router {
  const portal = linkEntry(deps);
  const router = Router();
  router.use(openApiValidator(portalDocumentAt(loadPortalDocument(), 'shortLinks', basePath), { forLinks: true }));
  router.get('/:code', async (req, res) => {
    res.redirect(302, (await portal.followShortLink(req.params.code!)).redirect);
  });
  return router;
}

export interface ShortLinkRoutes {
  /** Where the short links are mounted: the path of SHORT_LINK_BASE_URL. */
  mounts: { path: string; router: Router }[];
  /**
   * A request's path as it may be logged, its link credential replaced by `[redacted]`. The
   * app's request log must use it: only this module knows where in a path the credential sits.
   */
  logPath: (url: string) => string;
}

export function shortLinkRoutes(deps: AppDeps): ShortLinkRoutes {
  const shortLinks = mountPath(deps.config.shortLinkBaseUrl);
  return {
    mounts: [{ path: shortLinks || '/', router: shortLinkRouter(deps, shortLinks) }],
    logPath: redactLinkCredentials(deps.config),
  };
}
