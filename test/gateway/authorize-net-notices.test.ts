/**
 * Authorize.net's signed webhooks, as it posts them, read into our ProcessorNotice: the
 * signature checked first, every documented payment event translated or ignored.
 */
import { parseAuthorizeNetNotice } from '../../server/gateway/authorize-net/authorize-net-notices';
import { NoticeSignatureInvalid } from '../../server/gateway/processor-notices';
import { signedAuthorizeNetWebhook } from '../support/authorize-net-server';

const signatureKey = '8A1C1CB7C4D6E16E2E4F1D4D56A38C8E1D0A4B7C6E5F4A3B2C1D0E9F8A7B6C5D4E3F2A1B0C9D8E7F6A5B4C3D2E1F0A9B8C7D6E5F4A3B2C1D0E9F8A7B6C5D4E3F';

const webhook = (eventType: string, payload: Record<string, unknown> = {}) => ({
  notificationId: 'd0e8e7fe-c3e7-4add-a480-27bc5ce28a7b',
  eventType,
  eventDate: '2026-12-05T20:48:02.0080095Z',
  webhookId: '63d6fea2-aa13-4b1d-a204-f5fbc15942b7',
  payload: { responseCode: 1, authCode: 'LZ6I19', avsResponse: 'Y', authAmount: 45.0, entityName: 'transaction', id: '60020981676', ...payload },
});

const parse = (notice: Record<string, unknown>) => {
  const { rawBody, headers } = signedAuthorizeNetWebhook(notice, signatureKey);
  return parseAuthorizeNetNotice(rawBody, headers, signatureKey);
};

test.each([
  ['net.authorize.payment.authcapture.created', {}, { kind: 'payment.succeeded' }],
  ['net.authorize.payment.authcapture.created', { responseCode: 2 }, { kind: 'payment.failed', code: 'card_declined' }],
  ['net.authorize.payment.authcapture.created', { responseCode: 4 }, { kind: 'ignored', type: 'net.authorize.payment.authcapture.created' }],
  ['net.authorize.payment.fraud.approved', {}, { kind: 'payment.succeeded' }],
  ['net.authorize.payment.fraud.declined', { responseCode: 4 }, { kind: 'payment.failed', code: 'card_declined' }],
  ['net.authorize.payment.fraud.held', { responseCode: 4 }, { kind: 'ignored', type: 'net.authorize.payment.fraud.held' }],
  ['net.authorize.payment.void.created', {}, { kind: 'ignored', type: 'net.authorize.payment.void.created' }],
  ['net.authorize.payment.refund.created', {}, { kind: 'ignored', type: 'net.authorize.payment.refund.created' }],
  ['net.authorize.customer.paymentProfile.created', { entityName: 'customerPaymentProfile' }, { kind: 'ignored', type: 'net.authorize.customer.paymentProfile.created' }],
])('%s %j is read as %j', (eventType, payload, expected) => {
  expect(parse(webhook(eventType, payload))).toEqual({ noticeId: 'd0e8e7fe-c3e7-4add-a480-27bc5ce28a7b', reference: '60020981676', ...expected, ...(expected.kind === 'payment.failed' ? { message: expect.any(String) } : {}) });
});

test('the same webhook delivered twice is read the same (its notificationId is what makes the second change nothing)', () => {
  const notice = webhook('net.authorize.payment.authcapture.created');
  expect(parse(notice)).toEqual(parse(notice));
});

describe('a bad signature changes nothing: NoticeSignatureInvalid', () => {
  const { rawBody, headers } = signedAuthorizeNetWebhook(webhook('net.authorize.payment.fraud.approved'), signatureKey);

  test('signed with another key', () => {
    const other = signedAuthorizeNetWebhook(webhook('net.authorize.payment.fraud.approved'), 'B'.repeat(128));
    expect(() => parseAuthorizeNetNotice(rawBody, other.headers, signatureKey)).toThrow(NoticeSignatureInvalid);
  });

  test('a body changed after signing', () => {
    const changed = Buffer.from(rawBody.toString('utf8').replace('60020981676', '60020981677'));
    expect(() => parseAuthorizeNetNotice(changed, headers, signatureKey)).toThrow(NoticeSignatureInvalid);
  });

  test('missing, or not sha512=<128 hex digits>', () => {
    expect(() => parseAuthorizeNetNotice(rawBody, { 'content-type': 'application/json' }, signatureKey)).toThrow(NoticeSignatureInvalid);
    expect(() => parseAuthorizeNetNotice(rawBody, { 'x-anet-signature': 'sha256=abc' }, signatureKey)).toThrow(NoticeSignatureInvalid);
  });

  test('the header is found whatever its case, and the hex whatever its case', () => {
    const signature = headers['x-anet-signature']!;
    expect(parseAuthorizeNetNotice(rawBody, { 'X-ANET-Signature': signature.toLowerCase().replace('sha512', 'sha512') }, signatureKey)).toMatchObject({ kind: 'payment.succeeded' });
  });
});
