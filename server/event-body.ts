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
 * Format 1: deflate-raw (zlib level 6) with DICTIONARY_1. The dictionary must never change:
 * a new dictionary is a new format byte, and every format stays readable.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

const FORMAT_1 = 1;

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
const DICTIONARY_1 = Buffer.from(
  `null,false,true,"USD","US","production","sandbox","active",` + KEYS_1.split(' ').map((key) => `"${key}":`).join('') + '"2026-01-01T00:00:00.000Z"',
  'utf8',
);

/** The stored form of a payload. */
export function encodeEventBody(data: unknown): Buffer {
  const text = Buffer.from(JSON.stringify(data), 'utf8');
  return Buffer.concat([Buffer.from([FORMAT_1]), deflateRawSync(text, { dictionary: DICTIONARY_1 })]);
}

/** The payload's JSON text, as it was written. */
export function eventBodyText(stored: Buffer): string {
  if (stored[0] !== FORMAT_1) throw new Error(`unknown event body format ${stored[0]}`);
  return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_1 }).toString('utf8');
}

/** The payload. */
export function decodeEventBody(stored: Buffer): unknown {
  return JSON.parse(eventBodyText(stored));
}
