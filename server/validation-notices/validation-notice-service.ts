/**
 * The validation notice (12 CFR 1006.34), as the rule reads: gather what it says (the accounts it
 * covers and their itemization, the agency, the consumer), choose how it may go, date it the day
 * it leaves and compute its end date from that day, render it from the one template, keep its
 * PDF and data, send it through the communications log, and set `validation_notice_sent_at` on
 * every account it covers.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { todayUtc } from '../kernel/dates';
import { validationPeriodEndsOn } from '../kernel/validation-period';
import { debtAccountRepo, DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { addressRepo } from '../customer-store/address-repo';
import { readSettings } from '../settings/settings-service';
import { recipientOf } from '../communications/recipients';
import { decide, quietRuleOf, sendToDebtor } from '../communications/outgoing';
import { communicationRepo } from '../communications/communication-repo';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { noticeFacts } from './notice-facts';
import { chooseDelivery } from './notice-delivery';
import { addressLines } from './notice-delivery';
import type { NoticeData } from './notice-data';
import { noticeContent } from './notice-template';
import { noticeHtml, noticeText, type ResponseLinks } from './notice-html';
import { noticePdf } from './notice-pdf';
import { validationNoticeRepo, validationNoticeToApi, VALIDATION_NOTICE_COLUMNS, VALIDATION_NOTICES, type ValidationNoticeRow } from './validation-notice-repo';

type Schemas = components['schemas'];
type ValidationNotice = Schemas['ValidationNotice'];
export type NoticeDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets' | 'clock' | 'events' | 'files'>;

const SUBJECT = { en: (name: string) => `Important notice from ${name}`, es: (name: string) => `Aviso importante de ${name}` };

/** Where a consumer may dispute online: the Portal's "Dispute a debt", which asks who they are first. */
const disputeOnline = (deps: Pick<AppDeps, 'config'>, tenant: Tenant) =>
  `${deps.config.portalUrl}/dispute-a-debt?organization=${tenant.organizationId}${tenant.environment === 'sandbox' ? '&environment=sandbox' : ''}`;

/** The account asked for and those it covers: a parent's children, else itself. */
async function coveredBy(db: Knex, tenant: Tenant, key: string): Promise<{ account: DebtAccountRow; covered: DebtAccountRow[] }> {
  const accounts = debtAccountRepo(db, tenant);
  const account = await accounts.find(key);
  if (!account) throw ApiError.notFound('Debt account');
  const children = account.parent_id
    ? []
    : ((await accounts
        .query()
        .where(`${DEBT_ACCOUNTS}.parent_id`, account.id)
        .orderBy([{ column: `${DEBT_ACCOUNTS}.created_at` }, { column: `${DEBT_ACCOUNTS}.id` }])
        .select(DEBT_ACCOUNT_COLUMNS)) as DebtAccountRow[]);
  return { account, covered: children.length > 0 ? children : [account] };
}

async function send(deps: NoticeDeps, tenant: Tenant, key: string, request: Schemas['ValidationNoticeCreate']): Promise<ValidationNotice> {
  const { db } = deps;
  const now = nowFor(deps.clock, tenant);
  const { account, covered } = await coveredBy(db, tenant, key);
  const settings = await readSettings(db, tenant);
  if (!settings.mailing_address) throw ApiError.field('mailing_address', 'is not set in the settings (PUT /settings): the notice must say where to write to dispute (12 CFR 1006.34(c)(1))');
  const facts = await noticeFacts(db, tenant, account, covered);
  const recipient = (await recipientOf(db, tenant, account.customer_id))!;
  const address = (await addressRepo(db, tenant).forCustomers([recipient.id])).find((row) => row.is_primary);
  const choice = await chooseDelivery(db, tenant, request, recipient, address, now);

  // Dated the day it leaves: an e-mail held by quiet hours leaves on the day they end.
  // (An address barred by opt-out or work was refused e-mail above.)
  const decision = choice.delivery === 'email' ? decide('validation_notice', undefined, quietRuleOf(recipient, settings), now) : undefined;
  const sentOn = todayUtc(decision?.held_until ?? now);
  const language = request.language ?? 'en';
  const data: NoticeData = {
    language,
    sent_on: sentOn,
    ends_on: validationPeriodEndsOn(sentOn),
    collector: { name: settings.organization_name, address: settings.mailing_address.split('\n'), phone: settings.contact_phone, email: settings.contact_email },
    consumer: { name: recipient.name, address: addressLines(address) },
    current_creditor: facts.current_creditor,
    reference: facts.accounts.length === 1 ? facts.accounts[0]!.reference : (account.external_account_number || account.external_id || account.id.slice(0, 8)),
    accounts: facts.accounts,
    dispute_online: disputeOnline(deps, tenant),
  };
  const content = noticeContent(data);
  const amountDue = content.grand_total?.amount ?? content.accounts[0]!.total.amount;
  // Kept before the rows that name it (the storage port's rule).
  const file = await deps.files.put(await noticePdf(content, now), 'application/pdf');

  const row = await db.transaction(async (trx) => {
    const subject = SUBJECT[language](settings.organization_name);
    const communication =
      choice.delivery === 'email'
        ? await sendToDebtor(deps, trx, tenant, { customerId: recipient.id, debtAccountId: account.id, kind: 'validation_notice', subject, body: noticeText(content), now })
        : await communicationRepo(trx, tenant).insert({
            id: randomUUID(),
            channel: 'mail',
            // A letter: from the agency's mailing address (on the letter), no e-mail headers.
            from: null,
            reply_to: null,
            headers: null,
            customer_id: recipient.id,
            debt_account_id: account.id,
            kind: 'validation_notice',
            to: choice.to,
            subject,
            text: noticeText(content),
            status: 'sent',
            reason: null,
            held_until: null,
            opt_out_url: null,
            dedupe_key: null,
            created_at: now,
          });
    if (!communication) throw ApiError.notFound('Customer');
    if (choice.delivery === 'mail') await communicationRepo(trx, tenant).update(communication.id, { sent_at: now, updated_at: now });
    const ids = [...new Set([account.id, ...covered.map((row) => row.id)])];
    const accounts = debtAccountRepo(trx, tenant);
    for (const id of ids) await accounts.update(id, { validation_notice_sent_at: sentOn });
    await deps.events.record(trx, tenant, [{ name: 'debt-account.update', ids }]);
    return validationNoticeRepo(trx, tenant).insert({
      debt_account_id: account.id,
      debt_account_ids: covered.map((row) => row.id),
      customer_id: recipient.id,
      language,
      delivery: choice.delivery,
      to: choice.to,
      sent_on: sentOn,
      validation_period_ends_on: data.ends_on,
      amount_due: amountDue,
      esign_consent: choice.delivery === 'email' ? choice.consent : null,
      procedure_1006_42c: choice.procedure,
      communication_id: communication.id,
      file_key: file.key,
      file_size: file.size,
      file_sha256: file.sha256,
      data,
      created_at: now,
    });
  });
  return validationNoticeToApi(row);
}

async function list({ db }: Pick<AppDeps, 'db'>, tenant: Tenant, key: string, page: PageRequest): Promise<Listed<ValidationNotice>> {
  const account = await debtAccountRepo(db, tenant).find(key);
  if (!account) throw ApiError.notFound('Debt account');
  return listPage<ValidationNoticeRow, ValidationNotice>(validationNoticeRepo(db, tenant).ofAccount(account.id), page, { columns: VALIDATION_NOTICE_COLUMNS, table: VALIDATION_NOTICES, order: 'desc' }, (rows) =>
    rows.map(validationNoticeToApi),
  );
}

/** A kept notice as a file: its PDF, or the same notice as HTML rendered again from its data. */
async function file(deps: Pick<AppDeps, 'db' | 'files'>, tenant: Tenant, id: string, format: 'pdf' | 'html', links: ResponseLinks = {}): Promise<{ id: string; bytes: Buffer; contentType: string }> {
  const row = await validationNoticeRepo(deps.db, tenant).find(id);
  if (!row) throw ApiError.notFound('Validation notice');
  if (format === 'html') return { id: row.id, bytes: Buffer.from(noticeHtml(noticeContent(row.data), links), 'utf8'), contentType: 'text/html; charset=utf-8' };
  return { id: row.id, bytes: await deps.files.read(row.file_key), contentType: 'application/pdf' };
}

export function validationNoticeService(deps: NoticeDeps) {
  return {
    send: (tenant: Tenant, key: string, request: Schemas['ValidationNoticeCreate']) => send(deps, tenant, key, request),
    list: (tenant: Tenant, key: string, page: PageRequest) => list(deps, tenant, key, page),
    file: (tenant: Tenant, id: string, format: 'pdf' | 'html', links?: ResponseLinks) => file(deps, tenant, id, format, links),
  };
}
