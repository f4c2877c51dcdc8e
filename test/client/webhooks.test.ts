import {
  decryptWebhookData,
  deriveWebhookEncryptionKey,
  encryptWebhookData,
  signWebhookBody,
  verifyWebhookSignature,
} from '../../client';

// RFC 4231, test case 2: an HMAC-SHA256 vector computed by someone other than us.
const RFC4231_KEY = 'Jefe';
const RFC4231_DATA = 'what do ya want for nothing?';
const RFC4231_MAC = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';

// Produced with the openssl command line, independently of our code:
//   KEY=$(printf %s "$SECRET" | openssl dgst -sha256 -binary | head -c16 | xxd -p)
//   printf %s "$PLAINTEXT" | openssl enc -aes-128-cbc -K $KEY -iv 000102030405060708090a0b0c0d0e0f
// then base64 of IV || ciphertext.
const SECRET = 'whsec_test_0123456789abcdef';
const KEY_HEX = 'bc4dd10c7b7f177e5e86d7569673239a';
const IV = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const PLAINTEXT = { id: null, amount: 12500, reference_number: 'EXT-20261121-0001' };
const OPENSSL_CIPHERTEXT =
  'AAECAwQFBgcICQoLDA0ODyaUUc3MhrWjh9jYvHjO4V1KB6C2E3F1fT4FQFdXMAMT96WfYrz7OPpQ9H2wyQQjlb41hd84+SbpQiUYdZjj8qdOFzfLTM+9WgPRd3zRYbvU';

describe('webhook signature', () => {
  test('matches the RFC 4231 HMAC-SHA256 vector in lowercase hex', () => {
    expect(signWebhookBody(RFC4231_DATA, RFC4231_KEY)).toBe(RFC4231_MAC);
  });

  test('verifies the vector given as a string or as raw bytes', () => {
    expect(verifyWebhookSignature(RFC4231_DATA, RFC4231_MAC, RFC4231_KEY)).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(RFC4231_DATA), RFC4231_MAC, RFC4231_KEY)).toBe(true);
  });

  test('rejects a body changed by one byte', () => {
    expect(verifyWebhookSignature(RFC4231_DATA.replace('nothing', 'nothinG'), RFC4231_MAC, RFC4231_KEY)).toBe(false);
  });

  test('rejects another secret', () => {
    expect(verifyWebhookSignature(RFC4231_DATA, RFC4231_MAC, 'jefe')).toBe(false);
  });

  test('rejects a re-serialized body: the signature covers the exact bytes sent', () => {
    const sent = '{"data":{"id":"c1","name":"Dana Whitfield"}}';
    const signature = signWebhookBody(sent, SECRET);
    const reserialized = JSON.stringify(JSON.parse(sent), null, 2);
    expect(verifyWebhookSignature(sent, signature, SECRET)).toBe(true);
    expect(verifyWebhookSignature(reserialized, signature, SECRET)).toBe(false);
  });

  test.each([
    ['uppercase hex', RFC4231_MAC.toUpperCase()],
    ['a truncated signature', RFC4231_MAC.slice(0, 63)],
    ['a prefixed signature', `sha256=${RFC4231_MAC}`],
    ['an empty header', ''],
    ['a missing header', undefined],
  ])('rejects %s without throwing', (_label, signature) => {
    expect(verifyWebhookSignature(RFC4231_DATA, signature, RFC4231_KEY)).toBe(false);
  });
});

describe('external-charge.create encryption', () => {
  test('derives the key as the first 16 bytes of SHA-256 of the secret', () => {
    expect(Buffer.from(deriveWebhookEncryptionKey(SECRET)).toString('hex')).toBe(KEY_HEX);
  });

  test('produces exactly what openssl produces for the same key, IV and plaintext', () => {
    expect(encryptWebhookData(PLAINTEXT, SECRET, IV)).toBe(OPENSSL_CIPHERTEXT);
  });

  test('decrypts what openssl encrypted', () => {
    expect(decryptWebhookData(OPENSSL_CIPHERTEXT, SECRET)).toEqual(PLAINTEXT);
  });

  test('round-trips with a fresh random IV each time', () => {
    const data = { id: null, customer: { name: 'Dana Whitfield' }, amount: 4200 };
    const first = encryptWebhookData(data, SECRET);
    const second = encryptWebhookData(data, SECRET);
    expect(first).not.toBe(second);
    expect(decryptWebhookData(first, SECRET)).toEqual(data);
    expect(decryptWebhookData(second, SECRET)).toEqual(data);
  });

  test('refuses to open data encrypted with another secret', () => {
    const sealed = encryptWebhookData({ a: 1 }, SECRET);
    expect(() => decryptWebhookData(sealed, 'another_secret_of_16+')).toThrow();
  });

  test('refuses text that is not IV plus whole blocks', () => {
    expect(() => decryptWebhookData(Buffer.alloc(20).toString('base64'), SECRET)).toThrow(/wrong length/);
  });

  test('refuses an IV of the wrong size', () => {
    expect(() => encryptWebhookData({}, SECRET, Buffer.alloc(8))).toThrow(RangeError);
  });
});
