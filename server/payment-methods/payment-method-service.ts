/**
 * A new payment method. A card is kept as brand, last four, expiry and a keyed fingerprint:
 * the number and the security code go no further than this function. ACH numbers are sealed
 * with the data key and shown masked. The customer's first method is primary.
 */
import type { components } from '../../generated/schema';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { customerRepo } from '../customer-store/customer-repo';
import type { AppDeps } from '../deps';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { gatewayFor } from '../gateway/gateways';
import { customerIdOf, deletePaymentMethod, findPaymentMethod, updatePaymentMethod } from './payment-method-changes';
import { paymentMethodToApi } from './payment-method-mapper';
import { isValidRoutingNumber, mask, US_STATES } from './ach';
import { GatewayRateLimited, GatewayRefusal, GatewayUnanswered, type PaymentGateway, type PaymentOwner } from '../gateway/gateway';
import type { Knex } from 'knex';
import { cardBrand, expiryYear, isExpired, passesLuhn } from './card';
import { PAYMENT_METHOD_COLUMNS, PAYMENT_METHODS, paymentMethodRepo, type PaymentMethodRow, type PaymentMethodValues } from './payment-method-repo';
import { nowFor } from '../kernel/clock';

type PaymentMethodCreate = components['schemas']['PaymentMethodCreate'];
type PaymentMethodUpdate = components['schemas']['PaymentMethodUpdate'];
type PaymentMethod = components['schemas']['PaymentMethod'];
type CardInput = components['schemas']['CardInput'];
type AchInput = components['schemas']['AchInput'];

function cardValues(card: CardInput, secrets: SecretBox, now: Date): PaymentMethodValues {
  const errors: FieldErrors = {};
  if (!passesLuhn(card.card_number)) errors['card.card_number'] = ['is not a valid card number (Luhn check failed)'];
  const month = Number(card.card_expiration_month);
  const year = expiryYear(Number(card.card_expiration_year));
  if (isExpired(month, year, now)) errors['card.card_expiration_year'] = ['the card has expired'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return {
    type: 'card',
    card_holder: card.card_holder,
    card_last4: card.card_number.slice(-4),
    card_brand: cardBrand(card.card_number),
    card_exp_month: month,
    card_exp_year: year,
    card_zip: card.card_postal_code ?? null,
    card_fingerprint: secrets.fingerprint(card.card_number),
  };
}

function achValues(ach: AchInput, secrets: SecretBox): PaymentMethodValues {
  const errors: FieldErrors = {};
  if (!isValidRoutingNumber(ach.routing_number)) errors['ach.routing_number'] = ['is not a valid ABA routing number'];
  if (!US_STATES.has(ach.account_state)) errors['ach.account_state'] = ['is not a US state or territory code'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return {
    type: 'ach',
    account_holder: ach.account_holder,
    account_type: ach.account_type,
    routing_number_sealed: secrets.encrypt(ach.routing_number),
    routing_number_masked: mask(ach.routing_number),
    account_number_sealed: secrets.encrypt(ach.account_number),
    account_number_masked: mask(ach.account_number),
    account_zip: ach.account_zip,
    account_state: ach.account_state,
  };
}

/**
 * The gateway's token for the details, when the tenant has a gateway (the sandbox always
 * has): the numbers go to its vault, and we keep only the token beside what we show.
 */
export async function tokenize(gateway: PaymentGateway | undefined, body: PaymentMethodCreate, owner?: PaymentOwner): Promise<string | null> {
  if (!gateway) return null;
  try {
    return await tokenizeAt(gateway, body, owner);
  } catch (error) {
    // The processor refused the details (a number it does not take): a 422 on them, nothing saved.
    if (error instanceof GatewayRefusal) throw ApiError.field(body.card ? 'card.card_number' : 'ach.account_number', `was refused by the payment processor: ${error.message}`);
    if (error instanceof GatewayUnanswered || error instanceof GatewayRateLimited) {
      throw new ApiError('processing_error', 'The payment processor did not answer; nothing was saved or charged. Try again in a moment.');
    }
    throw error;
  }
}

async function tokenizeAt(gateway: PaymentGateway, body: PaymentMethodCreate, owner?: PaymentOwner): Promise<string> {
  if (body.card) {
    const { card_number, card_expiration_month, card_expiration_year } = body.card;
    return gateway.tokenizeCard({ number: card_number, expMonth: Number(card_expiration_month), expYear: expiryYear(Number(card_expiration_year)) }, owner);
  }
  const { routing_number, account_number, account_holder, account_type } = body.ach!;
  return gateway.tokenizeBankAccount({ routingNumber: routing_number, accountNumber: account_number, holderName: account_holder, accountType: account_type === 'savings' ? 'savings' : 'checking' }, owner);
}

/** The customer `customerKey` as the owner of a method to save at the gateway (a processor's customer keeps it). */
export async function ownerOf(db: Knex, tenant: Tenant, customerKey: string): Promise<PaymentOwner | undefined> {
  const customer = await customerRepo(db, tenant).find(customerKey);
  return customer ? { customerId: customer.id, name: customer.name, email: customer.email } : undefined;
}

/** The columns of a card or bank account, checked; the numbers are not among them. */
export function paymentMethodValues(body: PaymentMethodCreate, secrets: SecretBox, now: Date): PaymentMethodValues {
  return body.card ? cardValues(body.card, secrets, now) : achValues(body.ach!, secrets);
}

export type PaymentMethodDeps = Pick<AppDeps, 'db' | 'events' | 'secrets' | 'clock' | 'config'>;

export function paymentMethodService(deps: PaymentMethodDeps) {
  const { db, events, secrets, clock } = deps;
  return {
    /** A new method changes the customer's payload (its payment methods): customer.update. */
    async create(tenant: Tenant, customerKey: string, body: PaymentMethodCreate): Promise<PaymentMethodRow> {
      const values = paymentMethodValues(body, secrets, nowFor(clock, tenant));
      const owner = await ownerOf(db, tenant, customerKey);
      if (!owner) throw ApiError.notFound('Customer');
      values.gateway_token = await tokenize(await gatewayFor(deps, tenant), body, owner);
      return db.transaction(async (trx) => {
        const customer = await customerRepo(trx, tenant).find(customerKey, { forUpdate: true });
        if (!customer) throw ApiError.notFound('Customer');
        const methods = paymentMethodRepo(trx, tenant);
        const first = !(await methods.hasAny(customer.id));
        const row = await methods.insert(customer.id, { ...values, is_primary: first });
        await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
        return row;
      });
    },
    /** A customer's methods, oldest first, a page at a time. */
    async list(tenant: Tenant, customerKey: string, page: PageRequest): Promise<Listed<PaymentMethod>> {
      const customerId = await customerIdOf(db, tenant, customerKey);
      return listPage<PaymentMethodRow, PaymentMethod>(
        paymentMethodRepo(db, tenant).ofCustomer(customerId),
        page,
        { columns: PAYMENT_METHOD_COLUMNS, table: PAYMENT_METHODS },
        (rows) => rows.map((row) => paymentMethodToApi(row)),
      );
    },
    find: (tenant: Tenant, id: string) => findPaymentMethod(db, tenant, id),
    update: (tenant: Tenant, id: string, body: PaymentMethodUpdate) => updatePaymentMethod(db, events, tenant, id, body),
    remove: (tenant: Tenant, id: string) => deletePaymentMethod(db, events, tenant, id),
  };
}
