/**
 * The opt-out link's page (12 CFR 1006.6(e), RFC 8058): opening it shows one button and changes
 * nothing (mail scanners open links); the button, or a mail client's one-click POST (as
 * `application/x-www-form-urlencoded` or, as RFC 8058 §3.1 asks of clients,
 * `multipart/form-data`: the body is not needed), opts the address out and confirms, offering
 * to opt back in. No sign-in and no CSRF token: the signed link itself is the credential.
 */
import { Router } from 'express';
import type { AppDeps } from '../deps';
import { optInByLink, optOutByLink, readOptOutLink, type OptOutAnswer } from '../communications/opt-out';
import type { PortalScope } from './browser-sessions';
import { renderPage } from './render';

type Valid = Extract<OptOutAnswer, { valid: true }>;

function invalid(res: Parameters<typeof renderPage>[0], scope: PortalScope): void {
  renderPage(res, 400, 'opt-out', 'This link is not valid', { base: scope.base }, {
    message: 'This opt-out link is not valid (it may have been changed or copied incompletely). Nothing was changed. Please use the link exactly as it appears in your e-mail.',
  });
}

function confirmed(res: Parameters<typeof renderPage>[0], scope: PortalScope, link: string, answer: Valid): void {
  renderPage(res, 200, 'opt-out', 'You will no longer receive e-mails', { base: scope.base }, {
    message: `${answer.organizationName} will no longer send e-mails about your accounts to this address. Receipts of payments you make are still sent. Changed your mind? You can start e-mails again.`,
    optIn: answer.canOptIn ? `${scope.base}/opt-out/${link}/opt-in` : undefined,
  });
}

function offer(res: Parameters<typeof renderPage>[0], scope: PortalScope, link: string, answer: Valid): void {
  renderPage(res, 200, 'opt-out', `Stop e-mails from ${answer.organizationName}`, { base: scope.base }, {
    message: `Press the button to stop e-mails from ${answer.organizationName}. Receipts of payments you make will still be sent.`,
    action: `${scope.base}/opt-out/${link}`,
  });
}

export function optOutRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  router.get('/opt-out/:link', async (req, res, next) => {
    try {
      const answer = await readOptOutLink(deps, req.params.link);
      if (!answer.valid) return invalid(res, scope);
      if (answer.optedOut) return confirmed(res, scope, req.params.link, answer);
      offer(res, scope, req.params.link, answer);
    } catch (error) {
      next(error);
    }
  });
  router.post('/opt-out/:link', async (req, res, next) => {
    try {
      const answer = await optOutByLink(deps, req.params.link);
      if (!answer.valid) return invalid(res, scope);
      confirmed(res, scope, req.params.link, answer);
    } catch (error) {
      next(error);
    }
  });
  router.post('/opt-out/:link/opt-in', async (req, res, next) => {
    try {
      const answer = await optInByLink(deps, req.params.link);
      if (!answer.valid) return invalid(res, scope);
      renderPage(res, 200, 'opt-out', 'E-mails will start again', { base: scope.base }, {
        message: `${answer.organizationName} may e-mail you about your accounts again. Every e-mail has a link to stop them.`,
      });
    } catch (error) {
      next(error);
    }
  });
  return router;
}
