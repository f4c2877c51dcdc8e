/**
 * The checkout's form as the customer filled it in: an amount in dollars and cents, and the
 * ways to pay it names (the method chosen, and a new card or bank account whose number was
 * typed). Whether that is exactly one way is payment-terms' rule; the form words it for a person.
 * Form posts are not checked by the document's validator: a new card's or bank account's
 * fields are checked against the document's schemas (form-shapes.ts), each broken one worded
 * beside its field.
 */
import type { components } from '../../generated/schema';
import { wayErrors, type WayToPay } from '../payment-terms/payment-intent';
import { brokenFields } from './form-shapes';

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

const text = (form: Form, name: string) => (form[name] ?? '').trim();

/** A sentence of a rule's message: "must be …" -> "Must be ….". */
export function sentence(message: string): string {
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}${message.endsWith('.') ? '' : '.'}`;
}

/**
 * Every way to pay the form names, or the fields' errors: the method chosen, and a new card or
 * bank account whose number was typed although another method was chosen (the fields of a
 * method not chosen are hidden, not emptied, so a browser without our stylesheet, or a crafted
 * post, can send both). More than one is refused, charging nothing.
 */
export function waysToPay(form: Form, errors: FormErrors, saved: { id: string; label: string }[]): WayToPay | undefined {
  const method = text(form, 'method');
  const way: WayToPay = {};
  if (method.startsWith('saved:')) {
    const id = method.slice('saved:'.length);
    if (!saved.some((s) => s.id === id)) errors.method = 'Choose one of your saved payment methods, or enter a new one.';
    way.payment_method_id = id;
  } else if (method === 'card') way.card = newCard(form, errors);
  else if (method === 'ach') way.ach = newBankAccount(form, errors);
  else {
    errors.method = 'Choose how to pay.';
    return undefined;
  }
  if (method !== 'card' && text(form, 'card_number')) way.card = {};
  if (method !== 'ach' && text(form, 'ach_account')) way.ach = {};
  if (Object.keys(wayErrors(way)).length > 0) {
    const chosen = saved.find((s) => `saved:${s.id}` === method)?.label ?? (method === 'card' ? 'a new card' : 'a new bank account');
    const typed = way.card && method !== 'card' ? "a new card's number" : "a new bank account's number";
    errors.method = `You chose to pay with ${chosen}, but ${typed} was also entered. Nothing was charged. Choose one way to pay and press Pay again.`;
    return undefined;
  }
  return way;
}

/** What the form says beside a field of a new card or bank account that breaks the document's shape. */
const CARD_MESSAGES: Record<string, [string, string]> = {
  card_holder: ['card_holder', 'Enter the name on the card.'],
  card_number: ['card_number', 'Enter the card number (12 to 19 digits).'],
  card_expiration_month: ['card_exp_month', 'Enter the expiry month (1 to 12).'],
  card_expiration_year: ['card_exp_year', 'Enter the expiry year as two digits.'],
  card_security_code: ['card_cvc', 'The security code has 3 or 4 digits.'],
  card_postal_code: ['card_zip', 'The ZIP code has 5 digits.'],
};
const ACH_MESSAGES: Record<string, [string, string]> = {
  account_holder: ['ach_holder', 'Enter the name on the account.'],
  account_type: ['ach_type', 'Choose checking or savings.'],
  routing_number: ['ach_routing', 'The routing number has 9 digits.'],
  account_number: ['ach_account', 'The account number has 4 to 17 digits.'],
  account_zip: ['ach_zip', 'The ZIP code has 5 digits.'],
  account_state: ['ach_state', 'Enter the state as two letters, for example TX.'],
};

function report(broken: string[], messages: Record<string, [string, string]>, errors: FormErrors): void {
  for (const property of broken) {
    const [field, message] = messages[property] ?? ['form', 'Check the details of the card or bank account.'];
    errors[field] = message;
  }
}

function newCard(form: Form, errors: FormErrors): S['CardInput'] {
  const card = {
    card_holder: text(form, 'card_holder'),
    card_number: text(form, 'card_number').replace(/[\s-]/g, ''),
    card_expiration_month: text(form, 'card_exp_month'),
    card_expiration_year: text(form, 'card_exp_year'),
    ...(text(form, 'card_cvc') ? { card_security_code: text(form, 'card_cvc') } : {}),
    ...(text(form, 'card_zip') ? { card_postal_code: text(form, 'card_zip') } : {}),
  };
  report(brokenFields('CardInput', card), CARD_MESSAGES, errors);
  return { ...card, card_expiration_month: Number(card.card_expiration_month), card_expiration_year: Number(card.card_expiration_year) };
}

function newBankAccount(form: Form, errors: FormErrors): S['AchInput'] {
  const ach = {
    account_holder: text(form, 'ach_holder'),
    account_type: text(form, 'ach_type') as S['AchInput']['account_type'],
    routing_number: text(form, 'ach_routing'),
    account_number: text(form, 'ach_account'),
    account_zip: text(form, 'ach_zip'),
    account_state: text(form, 'ach_state').toUpperCase(),
  };
  report(brokenFields('AchInput', ach), ACH_MESSAGES, errors);
  return ach;
}

/** The messages of the API's field errors (`card.card_number`, `amount`, …) beside the form's fields. */
export function formErrorsOf(fieldErrors: Record<string, string[]> | undefined): FormErrors {
  const names: Record<string, string> = {
    'card.card_number': 'card_number',
    'card.card_expiration_year': 'card_exp_year',
    'ach.routing_number': 'ach_routing',
    'ach.account_state': 'ach_state',
    payment_method_id: 'method',
    card: 'method',
    ach: 'method',
    save_payment_method: 'method',
    start_date: 'start_date',
    amount: 'amount',
    frequency: 'frequency',
    debt_account_id: 'form',
    scheduled_at: 'pay_on',
  };
  const errors: FormErrors = {};
  for (const [field, messages] of Object.entries(fieldErrors ?? {})) {
    const name = names[field] ?? (/^[a-z_]+$/.test(field) ? field : 'form');
    const sentences = messages.map(sentence);
    errors[name] = [errors[name], ...sentences].filter(Boolean).join(' ');
  }
  return errors;
}
