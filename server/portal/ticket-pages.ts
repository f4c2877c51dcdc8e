/**
 * "Contact us": a signed-in customer (source `collect`) or a guest of the Portal's entry
 * (source `guest`, who gives a name, an e-mail address and a phone number) writes under a
 * category; the ticket's page then shows the thread (every body as text: Eta escapes it) with a
 * reply box, and opening it reads the agent's reply. A guest's thread is reachable only from the
 * browser session that opened it (its ids are kept on that session); anyone else's is a 404.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { CONTACT_REQUEST_CATEGORIES } from '../tickets/ticket-categories';
import { ticketRepo, type TicketRow } from '../tickets/ticket-repo';
import { attachmentName, ticketService } from '../tickets/ticket-service';
import { sendStoredFile } from '../http/file-download';
import { BODY_MAX, EMAIL_MAX, NAME_MAX, openTicket, PHONE_MAX, readByCustomer, SUBJECT_MAX, ticketOfWriter, writeInTicket } from '../tickets/ticket-thread';
import { needsVerification, visitOf, type PortalScope, type Visit } from './browser-sessions';
import { customerPages } from './customer-page';
import type { Form, FormErrors } from './payment-form';
import { portalAccounts } from './portal-accounts';
import { renderPage } from './render';

const BROWSER_SESSIONS = 'portal_browser_sessions';

/** Signed in (a link, verified when asked): the ticket is the customer's. A found guest has a customer too. */
const customerOf = (visit: Visit) => visit.browser.customer_id ?? undefined;

export function ticketRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const { context } = customerPages(deps, scope);
  const accounts = portalAccounts(deps);
  const base = scope.base;
  const limits = { subject: SUBJECT_MAX, body: BODY_MAX, name: NAME_MAX, email: EMAIL_MAX, phone: PHONE_MAX };

  /** A customer who must verify first does so before writing, as before any page of theirs. */
  async function visitHere(req: Request, res: Response): Promise<Visit | undefined> {
    const visit = await visitOf(deps, scope, req, res);
    if (!needsVerification(visit)) return visit;
    res.redirect(303, `${base}/verify?next=${encodeURIComponent(`${base}/accounts`)}`);
    return undefined;
  }

  const guestTickets = async (visit: Visit): Promise<string[]> => ((await deps.db(BROWSER_SESSIONS).where({ id: visit.browser.id }).first('ticket_ids')) as { ticket_ids: string[] }).ticket_ids;

  /** The ticket of this visit, or a 404 page. */
  async function ticketOf(req: Request, visit: Visit): Promise<TicketRow> {
    try {
      const customerId = customerOf(visit);
      return await ticketOfWriter(deps.db, visit.tenant, String(req.params.ticketId), customerId ? { customerId } : { guestTicketIds: await guestTickets(visit) });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) throw new ApiError('not_found', 'We could not find this conversation.');
      throw error;
    }
  }

  function renderContact(res: Response, visit: Visit, status: number, form: Form, errors: FormErrors) {
    renderPage(res, status, 'contact', 'Contact us', context(visit), { guest: !customerOf(visit), categories: CONTACT_REQUEST_CATEGORIES, form, errors, limits });
  }

  router.get('/contact', async (req, res) => {
    const visit = await visitHere(req, res);
    if (!visit) return;
    renderContact(res, visit, 200, { account: typeof req.query.account === 'string' ? req.query.account : '' }, {});
  });

  router.post('/contact', async (req, res) => {
    const visit = await visitHere(req, res);
    if (!visit) return;
    const form = req.body as Form;
    const customerId = customerOf(visit);
    const customer = customerId ? await accounts.customer(visit.tenant, customerId) : undefined;
    // An account of theirs, when they wrote from its page; anything else is no account.
    const account = customerId && form.account ? await accounts.find(visit.tenant, customerId, form.account).catch(() => undefined) : undefined;
    try {
      const id = await openTicket(deps, visit.tenant, {
        category: form.category ?? '',
        subject: form.subject ?? '',
        body: form.body ?? '',
        name: form.name,
        email: form.email,
        phone: form.phone,
        customer: customer && { id: customer.id, name: customer.name, email: customer.email, phone: customer.phone },
        debtAccountId: account?.account.id ?? null,
        now: visit.now,
      });
      if (!customer) await deps.db(BROWSER_SESSIONS).where({ id: visit.browser.id }).update({ ticket_ids: deps.db.raw('array_append(ticket_ids, ?::uuid)', [id]) });
      res.redirect(303, `${base}/tickets/${id}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 422) {
        const errors = Object.fromEntries(Object.entries(error.fieldErrors ?? {}).map(([field, messages]) => [field, messages.join(' ')]));
        return renderContact(res, visit, 422, { category: form.category, subject: form.subject, body: form.body, name: form.name, email: form.email, phone: form.phone, account: form.account }, errors);
      }
      throw error;
    }
  });

  async function renderTicket(res: Response, visit: Visit, ticket: TicketRow, status: number, form: Form, errors: FormErrors) {
    const messages = await ticketRepo(deps.db, visit.tenant).messagesOf([ticket.id]);
    const category = CONTACT_REQUEST_CATEGORIES.find((item) => item.key === ticket.category)?.label ?? ticket.category;
    renderPage(res, status, 'ticket', ticket.subject, context(visit), { ticket, messages, category, form, errors, limits });
  }

  router.get('/tickets/:ticketId', async (req, res) => {
    const visit = await visitHere(req, res);
    if (!visit) return;
    const ticket = await ticketOf(req, visit);
    await readByCustomer(deps, visit.tenant, ticket, visit.now);
    await renderTicket(res, visit, ticket, 200, {}, {});
  });

  // An attachment of this visit's own ticket (an agent's, in practice), as the API serves it.
  router.get('/tickets/:ticketId/messages/:messageId/attachment', async (req, res) => {
    const visit = await visitHere(req, res);
    if (!visit) return;
    const ticket = await ticketOf(req, visit);
    const messageId = String(req.params.messageId);
    const file = await ticketService(deps).attachment(visit.tenant, ticket.id, messageId);
    sendStoredFile(res, file, attachmentName(messageId, file.contentType));
  });

  router.post('/tickets/:ticketId/messages', async (req, res) => {
    const visit = await visitHere(req, res);
    if (!visit) return;
    const ticket = await ticketOf(req, visit);
    const form = req.body as Form;
    try {
      await writeInTicket(deps, visit.tenant, ticket, { customerId: customerOf(visit), name: ticket.name }, form.body ?? '', visit.now);
      res.redirect(303, `${base}/tickets/${ticket.id}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 422) return renderTicket(res, visit, ticket, 422, { body: form.body }, { body: error.fieldErrors?.body?.join(' ') ?? error.message });
      throw error;
    }
  });

  return router;
}
