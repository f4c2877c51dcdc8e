/**
 * What a validation notice is made from, kept with it (`validation_notices.data`) so that the
 * same notice can be rendered again, in HTML or as a PDF, exactly as it was sent.
 */
import type { Itemization } from '../debt-accounts/itemization';

export type NoticeLanguage = 'en' | 'es';

export interface NoticeAccount {
  id: string;
  /** The number the consumer knows: `external_account_number`, else `external_id`, else a short id. */
  reference: string;
  /** The creditor on the itemization date (§1006.34(c)(2)(iii)). */
  creditor_then: string;
  /** The product (a `product_type` location), when the account has one. */
  product: string | null;
  itemization: Itemization;
}

export interface NoticeData {
  language: NoticeLanguage;
  /** The notice's date, `YYYY-MM-DD`. */
  sent_on: string;
  /** The last day of the validation period, `YYYY-MM-DD` (kernel/validation-period.ts). */
  ends_on: string;
  collector: { name: string; address: string[]; phone: string | null; email: string | null };
  consumer: { name: string; address: string[] };
  /** The creditor to whom the debt is owed now (§1006.34(c)(2)(ii)). */
  current_creditor: string;
  /** The reference the consumer writes on the form and the cheque. */
  reference: string;
  accounts: NoticeAccount[];
  /** Where the consumer may dispute electronically (§1006.34(c)(4)(v)): the Portal, when the customer has one. */
  dispute_online: string | null;
}
