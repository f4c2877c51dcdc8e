import { deflateRawSync } from 'node:zlib';
import { decodeEventBody, DICTIONARY_1, encodeEventBody, eventBodyText, LEVEL } from '../../server/kernel/event-body';

/** A payload as a recording makes them: nested records, numbers, nulls, times. */
const payload = (n: number) => ({
  id: `4f0c6a1e-0000-4000-8000-${String(n).padStart(12, '0')}`,
  status: 'active',
  balance: n * 100,
  metadata: [{ attribute: 'branch', value: `Café n°${n} — 東京 🏦`, created_at: '2026-01-01 00:00:00', updated_at: '2026-01-02 03:04:05' }],
  debt_accounts: Array.from({ length: n % 7 }, (_, i) => ({ id: `account-${i}`, external_id: null, is_parent: i === 0 })),
});

describe('event bodies', () => {
  it('round trips payloads small, large and with any character', () => {
    const large = { rows: Array.from({ length: 3000 }, (_, n) => payload(n)) };
    const random = { text: Array.from({ length: 70_000 }, (_, n) => String.fromCharCode(32 + ((n * 7919) % 30000))).join('') };
    for (const data of [{}, [], payload(1), payload(12), large, random, { text: '\u{1F600}'.repeat(20_000) }]) {
      const stored = encodeEventBody(data);
      expect(stored[0]).toBe(1);
      expect(decodeEventBody(stored)).toEqual(data);
      expect(eventBodyText(stored)).toBe(JSON.stringify(data));
    }
  });

  it('writes format 1 byte for byte as deflateRawSync with the format-1 dictionary at its level, one payload after another', () => {
    const dictionary = DICTIONARY_1;
    for (let n = 0; n < 50; n += 1) {
      const data = n % 10 === 9 ? { rows: Array.from({ length: 400 }, (_, i) => payload(i + n)) } : payload(n);
      const expected = Buffer.concat([Buffer.from([1]), deflateRawSync(Buffer.from(JSON.stringify(data)), { dictionary, level: LEVEL })]);
      expect(encodeEventBody(data).equals(expected)).toBe(true);
    }
  });

  it('still reads a body stored by the first writer of format 1', () => {
    // Stored by encodeEventBody before the deflater was kept (deflateRawSync per payload, level 6).
    const stored = Buffer.from(STORED_BEFORE, 'hex');
    expect(decodeEventBody(stored)).toEqual(payload(5));
    // The kept deflater wrote those very bytes at level 6; at level 3 other bytes, the same payload.
    const now = encodeEventBody(payload(5));
    expect(now.toString('hex')).not.toBe(STORED_BEFORE);
    expect(decodeEventBody(now)).toEqual(payload(5));
    expect(deflateRawSync(Buffer.from(JSON.stringify(payload(5))), { dictionary: DICTIONARY_1, level: 6 }).toString('hex')).toBe(STORED_BEFORE.slice(2));
  });

  it('refuses a body of an unknown format', () => {
    expect(() => decodeEventBody(Buffer.from([9, 1, 2]))).toThrow('unknown event body format 9');
  });
});

const STORED_BEFORE =
  '01ab86c89ba419249b251aa6ea1a181818e89a80080b10618000a6a0021b6611bc088787a2a981810e9237a2ab41c55351665229385c928a12f392339474e0f1ea9c987678a542dea10da60a8f1aa6283c9bbbf1c9ae350a1fe6f72f53d241f506c2e90a30a72be9a0fa1faec448c1c0d8cac0c4cac054a93656073d2f44433d0b15d105998312aa79a0ba0c9c10c05943c90a54a3d5eaa0693324a80d5c1d62e83322539f3199fa4c88d4175b0b00';
