/**
 * An agent's reply, told to a signed-in customer by e-mail. It is a communication under
 * Regulation F (12 CFR 1006.2(d): it conveys information regarding the debt, if only that the
 * collector answered), so it goes through the communications log like every message to a
 * debtor: kind `ticket_reply`, agency-initiated, hence held in quiet hours (§1006.6(b)(1)(i))
 * and suppressed after an opt-out (§1006.6(e)), with the disclosure and the opt-out link. It
 * carries a link to the Portal (a customer session to the home page, where the ticket shows
 * unread), not the reply's text: a mailbox may be read by someone else (§1006.6(d)).
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { sendToDebtor } from '../communications/outgoing';
import { openSessionIn } from '../customer-sessions/customer-session-service';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import type { AppDeps } from '../deps';
import type { TicketRow } from './ticket-repo';

/** A week to open the link; after it the customer signs in as usual. */
export const REPLY_LINK_HOURS = 7 * 24;

export async function mailReply(deps: Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets' | 'clock'>, trx: Knex.Transaction, tenant: Tenant, ticket: TicketRow, organizationName: string, now: Date): Promise<void> {
  await sendToDebtor(deps, trx, tenant, {
    customerId: ticket.customer_id!,
    debtAccountId: ticket.debt_account_id,
    kind: 'ticket_reply',
    subject: `${organizationName || 'We'} replied to your message`,
    now,
    body: async () => {
      const customer = (await customerRepo(trx, tenant).find(ticket.customer_id!))!;
      const account = ticket.debt_account_id ? await debtAccountRepo(trx, tenant).find(ticket.debt_account_id) : undefined;
      const link = await openSessionIn(trx, deps, tenant, {
        customer,
        account: account && account.customer_id === customer.id ? account : undefined,
        destination: 'accounts_list',
        validUntilHours: REPLY_LINK_HOURS,
        tags: [
          { name: 'utm_medium', value: 'email' },
          { name: 'utm_campaign', value: 'ticket_reply' },
        ],
      });
      return [`Hello ${customer.name},`, '', 'We have replied to your message. To read the reply, open:', link].join('\n');
    },
  });
}
