/**
 * The checkout's form as the customer filled it in: an amount in dollars and cents, and a way
 * to pay (a saved method, a new card or a new bank account). Form posts are not checked by
 * the document's validator, so the schema's rules (CardInput, AchInput) are checked here, each
 * as a message beside its field.
 */
import type { components } from '../../generated/schema';

type S = components['schemas'];
export type FormErrors = Record<string, string>;
export type Form = Record<string, string | undefined>;

/** "$1,234.5" or "1234.50" as cents; undefined when it is not an amount. */
export function centsOf(text: string | undefined): number | undefined {
  const cleaned = (text ?? '').replace(/[$,\s]/g, '');
  if (!/^\d{1,10}(\.\d{1,2})?$/.test(cleaned)) return undefined;
  const [whole, fraction = ''] = cleaned.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

export type WayToPay = { payment_method_id: string } | { card: S['CardInput'] } | { ach: S['AchInput'] };

const text = (form: Form, name: string) => (form[name] ?? '').trim();

/** The way to pay the form names, or the fields' errors. `allowSaved`: a guest has no saved methods. */
export function wayToPay(form: Form, errors: FormErrors, savedIds: string[]): WayToPay | undefined {
  const method = text(form, 'method');
  if (method.startsWith('saved:')) {
    const id = method.slice('saved:'.length);
    if (!savedIds.includes(id)) errors.method = 'Choose one of your saved payment methods, or enter a new one.';
    return { payment_method_id: id };
  }
  if (method === 'card') {
    const card = {
      card_holder: text(form, 'card_holder'),
      card_number: text(form, 'card_number').replace(/[\s-]/g, ''),
      card_expiration_month: text(form, 'card_exp_month'),
      card_expiration_year: text(form, 'card_exp_year'),
      card_security_code: text(form, 'card_cvc') || undefined,
      card_postal_code: text(form, 'card_zip') || undefined,
    };
    if (!card.card_holder || card.card_holder.length > 255) errors.card_holder = 'Enter the name on the card.';
    if (!/^\d{12,19}$/.test(card.card_number)) errors.card_number = 'Enter the card number (12 to 19 digits).';
    if (!/^(0?[1-9]|1[0-2])$/.test(card.card_expiration_month)) errors.card_exp_month = 'Enter the expiry month (1 to 12).';
    if (!/^\d{2}$/.test(card.card_expiration_year)) errors.card_exp_year = 'Enter the expiry year as two digits.';
    if (card.card_security_code !== undefined && !/^\d{3,4}$/.test(card.card_security_code)) errors.card_cvc = 'The security code has 3 or 4 digits.';
    if (card.card_postal_code !== undefined && !/^\d{5}$/.test(card.card_postal_code)) errors.card_zip = 'The ZIP code has 5 digits.';
    return { card: { ...card, card_expiration_month: Number(card.card_expiration_month), card_expiration_year: Number(card.card_expiration_year) } as S['CardInput'] };
  }
  if (method === 'ach') {
    const ach = {
      account_holder: text(form, 'ach_holder'),
      account_type: text(form, 'ach_type') as S['AchInput']['account_type'],
      routing_number: text(form, 'ach_routing'),
      account_number: text(form, 'ach_account'),
      account_zip: text(form, 'ach_zip'),
      account_state: text(form, 'ach_state').toUpperCase(),
    };
    if (!ach.account_holder || ach.account_holder.length > 255) errors.ach_holder = 'Enter the name on the account.';
    if (!['checking', 'savings'].includes(ach.account_type)) errors.ach_type = 'Choose checking or savings.';
    if (!/^\d{9}$/.test(ach.routing_number)) errors.ach_routing = 'The routing number has 9 digits.';
    if (!/^\d{4,17}$/.test(ach.account_number)) errors.ach_account = 'The account number has 4 to 17 digits.';
    if (!/^\d{5}$/.test(ach.account_zip)) errors.ach_zip = 'The ZIP code has 5 digits.';
    if (!/^[A-Z]{2}$/.test(ach.account_state)) errors.ach_state = 'Enter the state as two letters, for example TX.';
    return { ach };
  }
  errors.method = 'Choose how to pay.';
  return undefined;
}

/** The messages of the API's field errors (`card.card_number`, `amount`, …) beside the form's fields. */
export function formErrorsOf(fieldErrors: Record<string, string[]> | undefined): FormErrors {
  const names: Record<string, string> = {
    'card.card_number': 'card_number',
    'card.card_expiration_year': 'card_exp_year',
    'ach.routing_number': 'ach_routing',
    'ach.account_state': 'ach_state',
    payment_method_id: 'method',
    start_date: 'start_date',
    amount: 'amount',
    frequency: 'frequency',
    debt_account_id: 'form',
    scheduled_at: 'pay_on',
  };
  const errors: FormErrors = {};
  for (const [field, messages] of Object.entries(fieldErrors ?? {})) {
    const name = names[field] ?? (/^[a-z_]+$/.test(field) ? field : 'form');
    const sentences = messages.map((m) => `${m.charAt(0).toUpperCase()}${m.slice(1)}${m.endsWith('.') ? '' : '.'}`);
    errors[name] = [errors[name], ...sentences].filter(Boolean).join(' ');
  }
  return errors;
}
