/**
 * The one dispatch by processor name for what processors send us: each processor's parser
 * checks its own signature and answers a ProcessorNotice (processor-notices.ts).
 */
import type { Processor } from './processor-read';
import { NoticeSignatureInvalid, type ProcessorNotice } from './processor-notices';
import { parseStripeNotice } from './stripe/stripe-notices';
import { parseAuthorizeNetNotice } from './authorize-net/authorize-net-notices';

/** Node's headers as one value each (a repeated header: its first). */
const single = (headers: Record<string, string | string[] | undefined>): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value]));

export type NoticeHeaders = Record<string, string | string[] | undefined>;

export function parseNotice(processor: Processor, rawBody: Buffer, headers: NoticeHeaders): ProcessorNotice {
  switch (processor.name) {
    case 'stripe':
      return parseStripeNotice(rawBody, headers, processor.credentials.webhook_secret!);
    case 'authorize_net':
      return parseAuthorizeNetNotice(rawBody, single(headers), processor.credentials.signature_key!);
    case 'sandbox':
      throw new NoticeSignatureInvalid('The simulator sends no notices.');
  }
}
