/** The categories a customer writes under: Tratta's keys, with English labels, for every organization. */
import type { components } from '../../generated/schema';

export const CONTACT_REQUEST_CATEGORIES: components['schemas']['ContactRequestCategory'][] = [
  { key: 'other', label: 'Other' },
  { key: 'trouble-logging-in', label: 'Trouble logging in' },
  { key: 'change-payment-plan-info', label: 'Change my payment plan' },
  { key: 'need-info-about-my-account', label: 'I need information about my account' },
  { key: 'need-call-support', label: 'I would like a call from support' },
];

export const isCategory = (key: string): boolean => CONTACT_REQUEST_CATEGORIES.some((category) => category.key === key);
