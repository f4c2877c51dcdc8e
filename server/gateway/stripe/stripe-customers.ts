/**
 * The Stripe Customer of each of our customers, per processor configuration: made once (its
 * create carries an idempotency key of our customer's, and the first one stored wins), so every
 * saved card and bank account of one debtor is a PaymentMethod of one Stripe Customer.
 */
import type { Knex } from 'knex';
import type Stripe from 'stripe';
import type { PaymentOwner } from '../gateway';
import { stripeCall } from './stripe-client';

const PROCESSOR_CUSTOMERS = 'processor_customers';

/** The Stripe Customer id of our customer, if one was made. */
export async function knownStripeCustomer(db: Knex, processorId: string, customerId: string): Promise<string | undefined> {
  const row = await db(PROCESSOR_CUSTOMERS).where({ processor_id: processorId, customer_id: customerId }).first('processor_customer_id');
  return row?.processor_customer_id;
}

/** The Stripe Customer of `owner`, made when there is none yet. */
export async function stripeCustomerOf(db: Knex, stripe: Stripe, processorId: string, owner: PaymentOwner): Promise<string> {
  const known = await knownStripeCustomer(db, processorId, owner.customerId);
  if (known) return known;
  const made = await stripeCall(() =>
    stripe.customers.create(
      { name: owner.name, email: owner.email ?? undefined, metadata: { customer_id: owner.customerId } },
      { idempotencyKey: `customer-${processorId}-${owner.customerId}` },
    ),
  );
  await db(PROCESSOR_CUSTOMERS).insert({ processor_id: processorId, customer_id: owner.customerId, processor_customer_id: made.id }).onConflict(['processor_id', 'customer_id']).ignore();
  return (await knownStripeCustomer(db, processorId, owner.customerId))!;
}
