/**
 * The account's documents in the Portal: the list, one document (opening it records
 * `viewed_at`), its PDF, and signing it — the customer types their full name and ticks the
 * ESIGN consent box, whose text and version the page shows; a signature without the box is a
 * 422 that records nothing. A document of the checkout is signed the same way and sends the
 * customer back to the checkout.
 *
 * The PDF is shown inline in the browser's own viewer (our decision, for the customer to read
 * before signing): the type we stored (checked by its bytes at upload), `nosniff`, and a CSP
 * that allows no script, style, frame or connection; `?download=1` gives it as an attachment.
 * No `sandbox` in that CSP: Chromium's PDF viewer refuses to run in a sandboxed document.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { documentRepo, type DocumentContext, type DocumentRow } from '../documents/document-repo';
import { markViewed, shownDocument, signDocument, SIGNER_NAME_MAX } from '../documents/document-signing';
import { CURRENT_CONSENT } from '../documents/esign-consent';
import type { PortalScope, Visit } from './browser-sessions';
import { customerPages } from './customer-page';
import { formErrorsOf, type Form, type FormErrors } from './payment-form';
import { portalAccounts } from './portal-accounts';
import { renderPage } from './render';
import { track } from './tracking';

const contextOf = (value: unknown): DocumentContext => (value === 'checkout' ? 'checkout' : 'account_documents');

export function documentRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const { page, context } = customerPages(deps, scope);
  const accounts = portalAccounts(deps);
  const base = scope.base;
  const accountOf = (req: Request, visit: Visit) => accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));

  router.get('/accounts/:accountId/documents', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    const repo = documentRepo(deps.db, visit.tenant);
    const documents = await repo.shownOf(view.account.id, 'account_documents');
    const signed = new Set((await repo.signaturesOf(documents.map((row) => row.id))).filter((row) => row.context === 'account_documents').map((row) => row.document_id));
    renderPage(res, 200, 'documents', 'Documents', context(visit), {
      view,
      documents: documents.map((row) => ({ row, toSign: row.signature_required && !signed.has(row.id) })),
      justSigned: documents.find((row) => row.id === req.query.signed)?.name,
    });
  }));

  async function renderDocument(res: Response, visit: Visit, accountId: string, document: DocumentRow, where: DocumentContext, status: number, form: Form, errors: FormErrors) {
    const signature = (await documentRepo(deps.db, visit.tenant).signaturesOf([document.id])).find((row) => row.context === where);
    renderPage(res, status, 'document', document.name, context(visit), {
      accountId,
      document,
      where,
      signature,
      consent: CURRENT_CONSENT,
      signerNameMax: SIGNER_NAME_MAX,
      form,
      errors,
    });
  }

  router.get('/accounts/:accountId/documents/:documentId', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    const where = contextOf(req.query.context);
    const document = await shownDocument(deps.db, visit.tenant, view.account.id, String(req.params.documentId), where);
    await markViewed(deps, visit.tenant, document);
    await renderDocument(res, visit, view.account.id, document, where, 200, {}, {});
  }));

  router.get('/accounts/:accountId/documents/:documentId/file', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    const document = await shownDocument(deps.db, visit.tenant, view.account.id, String(req.params.documentId));
    const bytes = await deps.files.read(document.file_key);
    const download = req.query.download === '1';
    res.set({
      'Content-Type': document.content_type,
      'Content-Disposition': `${download ? 'attachment' : 'inline'}; filename="document-${document.id}.pdf"`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      'Cache-Control': 'private, no-store',
    });
    res.status(200).end(bytes);
  }));

  router.post('/accounts/:accountId/documents/:documentId/sign', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    const form = req.body as Form;
    const where = contextOf(form.context);
    const document = await shownDocument(deps.db, visit.tenant, view.account.id, String(req.params.documentId), where);
    try {
      await signDocument(
        deps,
        visit.tenant,
        {
          accountId: view.account.id,
          documentId: document.id,
          context: where,
          customerId: visit.browser.customer_id!,
          signerName: form.signer_name ?? '',
          consent: form.consent === 'yes',
          consentVersion: form.consent_version ?? '',
          ip: req.ip ?? '',
          userAgent: req.get('user-agent') ?? '',
        },
        async (trx, _signed, told) => {
          if (told) {
            await track(trx, deps.events, visit.tenant, [
              { event: 'customer.document.signed', deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: view.account.id },
            ]);
          }
        },
      );
    } catch (error) {
      if (error instanceof ApiError && (error.status === 422 || error.status === 409)) {
        const errors = error.fieldErrors ? formErrorsOf(error.fieldErrors) : { form: error.message };
        return renderDocument(res, visit, view.account.id, document, where, error.status, { signer_name: form.signer_name }, errors);
      }
      throw error;
    }
    res.redirect(303, where === 'checkout' ? `${base}/accounts/${view.account.id}/checkout` : `${base}/accounts/${view.account.id}/documents?signed=${document.id}`);
  }));

  return router;
}
