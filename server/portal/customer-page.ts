/**
 * A page of a signed-in customer, for the Portal's feature pages (documents, tickets): the
 * visit, verified when its session asks for it, with a customer known — the same gate as the
 * account pages of pages.ts — and a 404 of theirs that leads back to their accounts.
 */
import type { Request, Response } from 'express';
import type { AppDeps } from '../deps';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { requireAccess, signedIn, type Feature } from './access';
import { ApiError } from '../kernel/errors';
import { PortalStop } from './page-error';
import type { PageContext } from './render';

export type CustomerHandler = (req: Request, res: Response, visit: Visit) => Promise<void>;

export function customerPages(deps: AppDeps, scope: PortalScope) {
  const base = scope.base;
  return {
    context: (visit: Visit): PageContext => ({ base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) }),
    page: (handler: CustomerHandler, feature: Feature = 'documents') => async (req: Request, res: Response) => {
      const visit = await visitOf(deps, scope, req, res);
      requireAccess(visit, feature, base, req.originalUrl.split('?')[0]!);
      try {
        await handler(req, res, visit);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          throw new PortalStop(404, 'not_found', 'Page not found', error.message, undefined, { href: `${base}/accounts`, text: 'Your accounts' });
        }
        if (error instanceof PortalStop && error.status === 404 && !error.link) {
          throw new PortalStop(error.status, error.errorCode, error.title, error.message, error.redirect, { href: `${base}/accounts`, text: 'Your accounts' });
        }
        throw error;
      }
    },
  };
}
