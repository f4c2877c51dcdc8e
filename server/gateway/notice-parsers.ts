/**
 * The one dispatch by processor name for what processors send us: each processor's parser
 * checks its own signature and answers a ProcessorNotice (processor-notices.ts).
 */
import type { Processor } from './processor-read';
import { NoticeSignatureInvalid, type ProcessorNotice } from './processor-notices';
import { parseStripeNotice } from './stripe/stripe-notices';

export type NoticeHeaders = Record<string, string | string[] | undefined>;

export function parseNotice(processor: Processor, rawBody: Buffer, headers: NoticeHeaders): ProcessorNotice {
  switch (processor.name) {
    case 'stripe':
      return parseStripeNotice(rawBody, headers, processor.credentials.webhook_secret!);
    case 'authorize_net':
      // parseAuthorizeNetNotice(rawBody, headers, processor.credentials.signature_key!) plugs in here.
      throw new NoticeSignatureInvalid('This build of the service has no Authorize.net adapter to check its notices.');
    case 'sandbox':
      throw new NoticeSignatureInvalid('The simulator sends no notices.');
  }
}
