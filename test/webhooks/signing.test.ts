/**
 * The test vector of the document's Webhooks tag, checked against the server's signer, the
 * client's helpers and an independent implementation (the `standardwebhooks` package, used
 * here only as a verifier).
 */
import { Webhook } from 'standardwebhooks';
import { signStandardWebhook, signWebhookBody, verifyStandardWebhook, verifyWebhook } from '../../client';
import { loadDocument } from '../../server/http/validator';
import { generateSecret, legacySignature, secretProblem, standardSignature } from '../../server/webhooks/signing';

/** The rows of the vector's table in the Webhooks tag: `| name | \`value\` |`. */
function documentVector() {
  const tag = (loadDocument() as unknown as { tags: { name: string; description: string }[] }).tags.find((t) => t.name === 'Webhooks')!;
  const cell = (label: string) => {
    const match = tag.description.match(new RegExp(`^\\| ${label.replace(/[-]/g, '\\-')} \\| \`([^\`]+)\``, 'm'));
    if (!match) throw new Error(`the document's vector has no ${label}`);
    return match[1]!;
  };
  return {
    id: cell('`webhook-id`'),
    timestamp: Number(cell('`webhook-timestamp`')),
    body: cell('body'),
    secret: cell('secret'),
    signature: cell('`webhook-signature`'),
    legacy: cell('`X-Service-Signature-256`'),
  };
}

const vector = documentVector();
const at = (seconds: number) => () => new Date(seconds * 1000);
const headers = (signature = vector.signature, timestamp = String(vector.timestamp)) => ({ 'webhook-id': vector.id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });

describe('the document test vector', () => {
  test('is what the server signs', () => {
    expect(standardSignature(vector.id, vector.timestamp, Buffer.from(vector.body), [vector.secret])).toBe(vector.signature);
    expect(legacySignature(Buffer.from(vector.body), vector.secret)).toBe(vector.legacy);
  });

  test('is what the client signs, and verifies with the client at its own time', () => {
    expect(signStandardWebhook(vector.id, vector.timestamp, vector.body, vector.secret)).toBe(vector.signature);
    expect(signWebhookBody(vector.body, vector.secret)).toBe(vector.legacy);
    expect(verifyStandardWebhook(vector.body, headers(), vector.secret, { now: at(vector.timestamp) })).toBe(true);
    expect(verifyWebhook(vector.body, headers(), vector.secret, { now: at(vector.timestamp) })).toBe(true);
  });

  test('verifies with the standardwebhooks library (an implementation other than ours)', () => {
    const library = new Webhook(vector.secret);
    // The library checks the timestamp against the real clock: sign anew at the current time.
    const now = Math.floor(Date.now() / 1000);
    const signature = standardSignature(vector.id, now, Buffer.from(vector.body), [vector.secret]);
    expect(library.verify(vector.body, headers(signature, String(now)))).toEqual(JSON.parse(vector.body));
    expect(library.sign(vector.id, new Date(vector.timestamp * 1000), vector.body)).toBe(vector.signature);
  });
});

describe('keys', () => {
  test('a secret without the whsec_ prefix is keyed with its UTF-8 bytes, as the library\'s raw format', () => {
    const secret = 'wh_sec_9fK2mQ7xLp4vR8tZ';
    const now = Math.floor(Date.now() / 1000);
    const signature = standardSignature(vector.id, now, Buffer.from(vector.body), [secret]);
    expect(new Webhook(secret, { format: 'raw' }).verify(vector.body, headers(signature, String(now)))).toEqual(JSON.parse(vector.body));
    expect(verifyStandardWebhook(vector.body, headers(signature, String(now)), secret)).toBe(true);
  });

  test('a generated secret is whsec_ and 32 bytes of base64, and the library takes it', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(secretProblem(secret)).toBeUndefined();
    const now = Math.floor(Date.now() / 1000);
    expect(() => new Webhook(secret).verify(vector.body, headers(standardSignature(vector.id, now, Buffer.from(vector.body), [secret]), String(now)))).not.toThrow();
  });

  test.each([
    ['not base64', 'whsec_not base64!!'],
    ['23 bytes', `whsec_${Buffer.alloc(23, 1).toString('base64')}`],
    ['65 bytes', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
  ])('a whsec_ secret of %s is refused', (_label, secret) => {
    expect(secretProblem(secret)).toMatch(/whsec_/);
  });

  test.each([24, 64])('a whsec_ secret of %i bytes is taken', (bytes) => {
    expect(secretProblem(`whsec_${Buffer.alloc(bytes, 7).toString('base64')}`)).toBeUndefined();
  });
});

describe('the client helper', () => {
  test.each([
    ['300 s late', 300, true],
    ['301 s late', 301, false],
    ['300 s early', -300, true],
    ['301 s early', -301, false],
  ])('a timestamp %s (%i s) is accepted: %s', (_label, offset, accepted) => {
    expect(verifyStandardWebhook(vector.body, headers(), vector.secret, { now: at(vector.timestamp + (offset as number)) })).toBe(accepted);
  });

  test('the tolerance can be narrowed', () => {
    expect(verifyStandardWebhook(vector.body, headers(), vector.secret, { now: at(vector.timestamp + 61), toleranceSeconds: 60 })).toBe(false);
  });

  test('any one of several signatures may match: the old secret\'s during a rotation', () => {
    const other = signStandardWebhook(vector.id, vector.timestamp, vector.body, 'whsec_' + Buffer.alloc(32, 9).toString('base64'));
    expect(verifyStandardWebhook(vector.body, headers(`${other} ${vector.signature}`), vector.secret, { now: at(vector.timestamp) })).toBe(true);
    expect(verifyStandardWebhook(vector.body, headers(other), vector.secret, { now: at(vector.timestamp) })).toBe(false);
  });

  test.each([
    ['a changed body', { body: vector.body.replace('Maria', 'Mario') }],
    ['a changed id', { id: 'b8e4c2a1-6d3f-4a9e-8c7b-1f2e3d4c5b6b' }],
    ['a changed timestamp', { timestamp: String(vector.timestamp + 1) }],
    ['a truncated signature', { signature: vector.signature.slice(0, -2) }],
    ['a v2 signature', { signature: vector.signature.replace('v1,', 'v2,') }],
    ['no signature', { signature: '' }],
    ['a timestamp that is not a number', { timestamp: '17951O4000' }],
  ])('refuses %s', (_label, change: { body?: string; id?: string; timestamp?: string; signature?: string }) => {
    const given = { ...headers(change.signature ?? vector.signature, change.timestamp ?? String(vector.timestamp)), 'webhook-id': change.id ?? vector.id };
    expect(verifyStandardWebhook(change.body ?? vector.body, given, vector.secret, { now: at(vector.timestamp) })).toBe(false);
  });

  test('verifyWebhook needs the Standard Webhooks headers: the body signature alone can be replayed forever', () => {
    expect(verifyWebhook(vector.body, { ...headers(), 'x-service-signature-256': vector.legacy }, vector.secret, { now: at(vector.timestamp) })).toBe(true);
    expect(verifyWebhook(vector.body, { 'x-service-signature-256': vector.legacy }, vector.secret, { now: at(vector.timestamp) })).toBe(false);
  });
});
