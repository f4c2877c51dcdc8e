/**
 * How an event's payload is stored in the event log (`webhook_events.body`): its JSON text,
 * compressed in this process, behind one byte naming the format.
 *
 * PostgreSQL compresses a value only once its row passes about 2 kB (TOAST_TUPLE_THRESHOLD;
 * `toast_tuple_target` cannot lower that), and most payloads are 0.5 to 2 kB, so a `jsonb`
 * payload was stored whole: 1295 bytes per event for a 917-byte customer. Deflate alone
 * halves such a small JSON text; with a preset dictionary of the payloads' keys it takes
 * about 40% of it, because the keys are most of a small payload's text. The worker then
 * builds a delivery's body from the stored text, without parsing and serializing it again.
 *
 * Format 1: deflate-raw with DICTIONARY_1. The dictionary must never change: a new dictionary
 * is a new format byte, and every format stays readable. The level is not part of the format
 * (inflate reads any): bodies were written at zlib's default 6 until 2026-11-29, at LEVEL since.
 *
 * Every recorded event is encoded here, in the recording transaction, so the cost per call
 * counts. `deflateRawSync` builds a stream object and a fresh native deflate state (about
 * 270 kB, initialised and the dictionary loaded, cold in cache) for each call and closes it
 * after: most of its time in a real run. One deflater is kept instead and reset between
 * payloads (zlib's deflateReset, which Node follows by loading the dictionary again), so the
 * bytes are deflateRawSync's, byte for byte (test/webhooks/event-body.test.ts checks it).
 */
import { constants, deflateRawSync, DeflateRaw, inflateRawSync } from 'node:zlib';

const FORMAT_1 = 1;

/**
 * zlib level 3 (its fast matcher), not the default 6: on the scheduler's payloads (3,000 events,
 * 11 kB of JSON each) the kept deflater took 50-70 µs per event against 104-127 µs, for bodies
 * 13.0% of the JSON's size against 11.5% (13% more bytes stored). Every recorded event is
 * deflated in the recording process's one thread, which is what bounds a busy run; the bytes are
 * cheap. Levels 1 and 2 took as long as 3 and stored more.
 */
export const LEVEL = 3;

/**
 * Keys of the document's payloads, the most frequent last (deflate finds the nearest copies
 * cheapest), and values every payload repeats.
 */
const KEYS_1 =
  'size content_type refunded_amount routing_number account_type card_number card_holder last_error debt_accounts_count min_payment_amount ' +
  'payment_method body last_activity_at signed_at description subject months_period discounted_amount discount_percentage successfully_charged_at ' +
  'attempts address ssn_last4 payment_methods communication_preferences billing_address locations resolved_at zip address_2 address_1 ' +
  'phone_number username details payment_plan_uuid error_code account_holder charge_id settlement_offer file events completed_at destination ' +
  'validation_notice_sent_at external_status payment_plan transactions location title author comment scheduled_at bank_account payment_method_type ' +
  'reference_number meta debt_account_dispute_id debt_accounts date_of_birth charges parent_external_id reason files url account_number time_zone ' +
  'country external_account_number balance billing_type error total_amount value line2 line1 fees payment_method_id start_date frequency ' +
  'postal_code current_balance ach is_primary customer customer_id phone debt_account state city source card rules debt_account_id data ' +
  'metadata type amount email external_id updated_at status created_at name id';
/** Exported for the tests, which compare the kept deflater's bytes with deflateRawSync's. */
export const DICTIONARY_1 = Buffer.from(
  `null,false,true,"USD","US","production","sandbox","active",` + KEYS_1.split(' ').map((key) => `"${key}":`).join('') + '"2026-01-01T00:00:00.000Z"',
  'utf8',
);

/**
 * The native deflate state under Node's DeflateRaw stream, and its write state (output space
 * left, input left). Node's own synchronous path writes through these and then closes the
 * handle; they are not documented, so their absence (another Node) falls back to deflateRawSync.
 */
interface NativeDeflate {
  writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, output: Buffer, outOffset: number, outLength: number): void;
  reset(): void;
}

/** One deflater for the process, reset after each payload; buffers grown to the largest payload seen. */
const kept: { stream?: DeflateRaw; handle?: NativeDeflate; state?: Uint32Array; input: Buffer; output: Buffer } = {
  input: Buffer.alloc(0),
  output: Buffer.alloc(0),
};

function keptDeflater(): { handle: NativeDeflate; state: Uint32Array } | undefined {
  if (!kept.stream || kept.stream.destroyed) {
    const stream = new DeflateRaw({ dictionary: DICTIONARY_1, level: LEVEL });
    // An error destroys the stream (and is thrown again by the fallback below), never emitted unheard.
    stream.on('error', () => {});
    const inside = stream as unknown as { _handle?: NativeDeflate; _writeState?: Uint32Array };
    kept.stream = stream;
    kept.handle = typeof inside._handle?.writeSync === 'function' && typeof inside._handle.reset === 'function' ? inside._handle : undefined;
    kept.state = inside._writeState instanceof Uint32Array ? inside._writeState : undefined;
  }
  return kept.handle && kept.state ? { handle: kept.handle, state: kept.state } : undefined;
}

/** The deflated text behind the format byte, by the kept deflater; undefined when it cannot. */
function deflateKept(text: string): Buffer | undefined {
  const deflater = keptDeflater();
  if (!deflater) return undefined;
  // UTF-8 takes at most 3 bytes per UTF-16 unit; deflate adds at most 5 bytes per 16 kB stored block.
  if (kept.input.length < text.length * 3) kept.input = Buffer.allocUnsafe(text.length * 3);
  const length = kept.input.write(text, 'utf8');
  const room = 1 + length + (length >> 10) + 64;
  if (kept.output.length < room) kept.output = Buffer.allocUnsafe(room);
  const { handle, state } = deflater;
  kept.output[0] = FORMAT_1;
  try {
    handle.writeSync(constants.Z_FINISH, kept.input, 0, length, kept.output, 1, kept.output.length - 1);
  } catch {
    kept.stream = undefined;
  }
  // A failed write destroys the stream: a new one next time.
  if (!kept.stream || kept.stream.destroyed) {
    kept.stream = undefined;
    return undefined;
  }
  const [outputLeft, inputLeft] = [state[0]!, state[1]!];
  handle.reset();
  // Not finished in the room given (cannot happen by deflate's bound): the plain way instead.
  if (inputLeft !== 0 || outputLeft === 0) return undefined;
  return Buffer.from(kept.output.subarray(0, kept.output.length - outputLeft));
}

/** The stored form of a payload. */
export function encodeEventBody(data: unknown): Buffer {
  const json = JSON.stringify(data);
  const stored = deflateKept(json);
  if (stored) return stored;
  const text = Buffer.from(json, 'utf8');
  return Buffer.concat([Buffer.from([FORMAT_1]), deflateRawSync(text, { dictionary: DICTIONARY_1, level: LEVEL })]);
}

/** The payload's JSON text as it was written, in UTF-8: what an answer can carry as it is. */
export function eventBodyBytes(stored: Buffer): Buffer {
  if (stored[0] !== FORMAT_1) throw new Error(`unknown event body format ${stored[0]}`);
  return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_1 });
}

/** The payload's JSON text, as it was written. */
export function eventBodyText(stored: Buffer): string {
  return eventBodyBytes(stored).toString('utf8');
}

/** The payload. */
export function decodeEventBody(stored: Buffer): unknown {
  return JSON.parse(eventBodyText(stored));
}
