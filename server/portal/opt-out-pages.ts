/**
 * The opt-out link's page (12 CFR 1006.6(e), RFC 8058): opening it shows one button and changes
 * nothing (mail scanners open links); the button, or a mail client's one-click POST, opts out
 * and confirms. No sign-in and no CSRF token: the signed link itself is the credential.
 */
import { Router } from 'express';
import type { AppDeps } from '../deps';
import { optOutByLink, readOptOutLink, type OptOutAnswer } from '../communications/opt-out';
import type { PortalScope } from './browser-sessions';
import { renderPage } from './render';

function invalid(res: Parameters<typeof renderPage>[0], scope: PortalScope): void {
  renderPage(res, 400, 'opt-out', 'This link is not valid', { base: scope.base }, {
    message: 'This opt-out link is not valid (it may have been changed or copied incompletely). Nothing was changed. Please use the link exactly as it appears in your e-mail.',
  });
}

function confirmed(res: Parameters<typeof renderPage>[0], scope: PortalScope, answer: Extract<OptOutAnswer, { valid: true }>): void {
  renderPage(res, 200, 'opt-out', 'You will no longer receive e-mails', { base: scope.base }, {
    message: `${answer.organizationName} will no longer send you e-mails about your accounts. Receipts of payments you make are still sent.`,
  });
}

export function optOutRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  router.get('/opt-out/:link', async (req, res, next) => {
    try {
      const answer = await readOptOutLink(deps, req.params.link);
      if (!answer.valid) return invalid(res, scope);
      if (answer.optedOut) return confirmed(res, scope, answer);
      renderPage(res, 200, 'opt-out', `Stop e-mails from ${answer.organizationName}`, { base: scope.base }, {
        message: `Press the button to stop e-mails from ${answer.organizationName}. Receipts of payments you make will still be sent.`,
        action: `${scope.base}/opt-out/${req.params.link}`,
      });
    } catch (error) {
      next(error);
    }
  });
  router.post('/opt-out/:link', async (req, res, next) => {
    try {
      const answer = await optOutByLink(deps, req.params.link);
      if (!answer.valid) return invalid(res, scope);
      confirmed(res, scope, answer);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
