/**
 * The Portal's disputes for a signed-in customer: "Dispute this debt" on an account opens a
 * form (reason, details and an optional file, multipart through portal-uploads.ts); filing it
 * records a dispute in writing (Regulation F comment 38-1) with `customer.dispute.created`, and
 * opens its page: status, thread, files (each downloaded as an attachment) and a comment box.
 * A refused file (413, 415, 422) is told on the form, and no dispute is recorded. An account
 * with an open dispute leads to that dispute instead of a second form.
 */
import { Router, type Request, type Response } from 'express';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import type { Tenant } from '../kernel/tenant';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { requireAccess, signedIn } from './access';
import { PortalStop } from './page-error';
import { portalAccounts } from './portal-accounts';
import { renderPage, type PageContext } from './render';
import { track } from './tracking';
import { addComment, createDispute, disputeFile, findDispute, type Filing } from '../disputes/dispute-service';
import { sendStoredFile } from '../http/file-download';
import { fileRefusal, portalFile, uploadErrorOf } from './portal-uploads';
import { disputeRepo, OPEN_STATUSES } from '../dispute-store/dispute-repo';
import { validationNoticeRepo } from '../validation-notices/validation-notice-repo';
import { noticeContent } from '../validation-notices/notice-template';
import { noticeHtml } from '../validation-notices/notice-html';

type Reason = components['schemas']['DisputeReason'];

export const REASONS: { value: Reason; label: string }[] = [
  { value: 'not_mine', label: 'This is not my debt' },
  { value: 'wrong_amount', label: 'The amount is wrong' },
  { value: 'already_paid', label: 'I already paid it' },
  { value: 'identity_theft', label: 'I am a victim of identity theft' },
  { value: 'original_creditor_requested', label: 'I want the name and address of the original creditor' },
  { value: 'other', label: 'Another reason' },
];

const STATUS_LABELS: Record<components['schemas']['DisputeStatus'], string> = {
  pending: 'Received',
  under_review: 'Under review',
  verified: 'Answered: the debt was verified',
  resolved: 'Resolved',
  withdrawn: 'Withdrawn',
};

type Handler = (req: Request, res: Response, visit: Visit) => Promise<void>;

/** How the dispute form names an account: its number on the customer's letters, else a short id. */
export const accountLabel = (account: { id: string; external_account_number?: string | null; external_id?: string | null }) =>
  account.external_account_number || account.external_id || account.id.slice(0, 8);

/** The account's open dispute, if any: the form leads there instead of filing a second one. */
export const openDisputeOf = (deps: Pick<AppDeps, 'db'>, tenant: Tenant, accountId: string): Promise<{ id: string } | undefined> =>
  disputeRepo(deps.db, tenant).query().where({ debt_account_id: accountId }).whereIn('status', OPEN_STATUSES).orderBy('created_at', 'desc').first('id');

type FilledForm = { ok: true; body: { reason: Reason; details: string | null } } | { ok: false; form: Record<string, string>; errors: Record<string, string> };

/** The dispute form's answers (a reason of the list, details of at most 5000 characters), or what to show again with its errors. */
export function disputeFormOf(form: Record<string, string>): FilledForm {
  const errors: Record<string, string> = {};
  const reason = REASONS.find((option) => option.value === form.reason)?.value;
  if (!reason) errors.reason = 'Choose why you dispute this debt.';
  const details = String(form.details ?? '').trim();
  if (details.length > 5000) errors.details = 'Tell us in at most 5000 characters.';
  if (!reason || Object.keys(errors).length > 0) return { ok: false, form: { reason: form.reason ?? '', details }, errors };
  return { ok: true, body: { reason, details: details || null } };
}

/** The dispute form, posting to `action` (a signed-in customer's account, or the guest's filing). */
export function renderDisputeForm(res: Response, context: PageContext, target: { action: string; label: string; back: { href: string; text: string } }, status = 200, form: Record<string, string> = {}, errors: Record<string, string> = {}): void {
  renderPage(res, status, 'dispute-form', 'Dispute this debt', context, { ...target, reasons: REASONS, form, errors });
}

/**
 * Files the dispute a form describes (fields and optional file): answers its id, or shows the
 * form again (`show`) with what was refused and answers undefined. A file too large, of a type
 * we refuse or whose bytes are not its type is told on the form with its status (413, 415,
 * 422), and nothing is recorded (createDispute checks and keeps the file before the dispute).
 */
export async function fileDisputeFromForm(
  deps: AppDeps,
  tenant: Tenant,
  accountId: string,
  req: Request,
  res: Response,
  filing: Omit<Filing, 'file'>,
  show: (status: number, form: Record<string, string>, errors: Record<string, string>) => void,
): Promise<string | undefined> {
  const filled = disputeFormOf(req.body as Record<string, string>);
  const refused = fileRefusal(uploadErrorOf(res));
  if (refused || !filled.ok) {
    const form = filled.ok ? { reason: filled.body.reason, details: filled.body.details ?? '' } : filled.form;
    show(refused?.status ?? 422, form, { ...(filled.ok ? {} : filled.errors), ...(refused ? { file: refused.message } : {}) });
    return undefined;
  }
  const upload = portalFile(req);
  try {
    return (await createDispute(deps, tenant, accountId, filled.body, { ...filing, ...(upload ? { file: upload } : {}) })).id;
  } catch (error) {
    const aboutFile = fileRefusal(error);
    if (!aboutFile) throw error;
    show(aboutFile.status, { reason: filled.body.reason, details: filled.body.details ?? '' }, { file: aboutFile.message });
    return undefined;
  }
}

export function disputePagesRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const accounts = portalAccounts(deps);
  const base = scope.base;
  const context = (visit: Visit) => ({ base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) });
  const notFound = () => new PortalStop(404, 'not_found', 'Dispute not found', 'We could not find this dispute among yours.', undefined, { href: `${base}/accounts`, text: 'Your accounts' });

  /** A signed-in customer's page (a guest is sent to the start, an unverified visit to verify). */
  const page = (handler: Handler) => async (req: Request, res: Response) => {
    const visit = await visitOf(deps, scope, req, res);
    requireAccess(visit, 'disputes', base, req.originalUrl.split('?')[0]!);
    await handler(req, res, visit);
  };

  const renderForm = (res: Response, visit: Visit, accountId: string, label: string, status = 200, form: Record<string, string> = {}, errors: Record<string, string> = {}) =>
    renderDisputeForm(res, context(visit), { action: `${base}/accounts/${accountId}/dispute`, label, back: { href: `${base}/accounts/${accountId}`, text: 'Back to the account' } }, status, form, errors);

  router.get('/accounts/:accountId/dispute', page(async (req, res, visit) => {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    const open = await openDisputeOf(deps, visit.tenant, view.account.id);
    if (open) return res.redirect(303, `${base}/disputes/${open.id}`);
    // Pre-filled from the validation notice's response form (?reason=…).
    const reason = REASONS.find((option) => option.value === req.query.reason)?.value;
    renderForm(res, visit, view.account.id, accountLabel(view.account), 200, reason ? { reason } : {});
  }));

  /**
   * The account's latest validation notice as its HTML page, whose response form's choices
   * open the dispute form above, pre-filled. The page is self-contained: its one inline style
   * sheet is allowed for this answer alone; still no script.
   */
  router.get('/accounts/:accountId/validation-notice', page(async (req, res, visit) => {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    const notice = await validationNoticeRepo(deps.db, visit.tenant).latestOf(view.account.id);
    if (!notice) throw new PortalStop(404, 'not_found', 'No notice yet', 'There is no validation notice for this account yet.', undefined, { href: `${base}/accounts/${view.account.id}`, text: 'Back to the account' });
    const dispute = (reason: Reason) => `${base}/accounts/${view.account.id}/dispute?reason=${reason}`;
    const html = noticeHtml(noticeContent(notice.data), { not_mine: dispute('not_mine'), wrong_amount: dispute('wrong_amount'), other: dispute('other'), original_creditor: dispute('original_creditor_requested') });
    res.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'");
    res.type('html').send(html);
  }));

  router.post('/accounts/:accountId/dispute', page(async (req, res, visit) => {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    const id = await fileDisputeFromForm(deps, visit.tenant, view.account.id, req, res, {
      source: 'portal',
      within: (trx) =>
        track(trx, deps.events, visit.tenant, [{ event: 'customer.dispute.created', deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: view.account.id }]),
    }, (status, form, errors) => renderForm(res, visit, view.account.id, accountLabel(view.account), status, form, errors));
    if (id) res.redirect(303, `${base}/disputes/${id}?filed=1`);
  }));

  const mine = async (visit: Visit, id: string) => {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw notFound();
    try {
      const dispute = await findDispute(deps.db, visit.tenant, id);
      if (dispute.customer_id !== visit.browser.customer_id) throw notFound();
      return dispute;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw notFound();
      throw error;
    }
  };

  const renderDispute = async (res: Response, visit: Visit, id: string, status = 200, extra: object = {}) => {
    const dispute = await mine(visit, id);
    renderPage(res, status, 'dispute', 'Your dispute', context(visit), { dispute, statusLabel: STATUS_LABELS[dispute.status], reasonLabel: REASONS.find((r) => r.value === dispute.reason)!.label, ...extra });
  };

  router.get('/disputes/:disputeId', page(async (req, res, visit) => {
    await renderDispute(res, visit, String(req.params.disputeId), 200, { filed: req.query.filed === '1' });
  }));

  /** A file of the customer's own dispute, as an attachment named by its dispute, never by a path of the upload. */
  router.get('/disputes/:disputeId/files/:fileId', page(async (req, res, visit) => {
    const dispute = await mine(visit, String(req.params.disputeId));
    const fileId = String(req.params.fileId);
    const listed = dispute.files.find((file) => file.id === fileId);
    if (!listed) throw notFound();
    const { row, bytes } = await disputeFile(deps, visit.tenant, dispute.id, listed.id);
    sendStoredFile(res, { bytes, contentType: row.content_type }, row.name);
  }));

  router.post('/disputes/:disputeId/comments', page(async (req, res, visit) => {
    const dispute = await mine(visit, String(req.params.disputeId));
    const comment = String((req.body as Record<string, string>).comment ?? '').trim();
    if (comment.length < 1 || comment.length > 5000) {
      return renderDispute(res, visit, dispute.id, 422, { commentError: 'Write a message of 1 to 5000 characters.' });
    }
    const customer = await accounts.customer(visit.tenant, visit.browser.customer_id!);
    await addComment(deps, visit.tenant, dispute.id, { comment, author: { name: customer.name, title: 'Customer' } });
    res.redirect(303, `${base}/disputes/${dispute.id}`);
  }));

  return router;
}
