/**
 * The Stripe adapter: the port in Stripe's terms, on the official SDK. A saved card or bank
 * account is a PaymentMethod of the debtor's Stripe Customer (we keep its ids in the token, and
 * brand, last four and expiry beside it); a charge is a PaymentIntent confirmed server-side
 * (`off_session` when no payer is present), ACH as `us_bank_account` with the debtor's
 * authorization recorded as its mandate; our charge's id is its Idempotency-Key and its
 * `metadata.charge_id`. Void cancels a PaymentIntent not yet captured, else refunds it.
 *
 * How the port's promise is kept (after `find` answers "never received", nothing can take the
 * money): see the port's comment (gateway.ts). In short, a PaymentIntent is created unconfirmed,
 * its id recorded with the charge, and only then confirmed; `find` cancels one it finds
 * unconfirmed.
 */
import Stripe from 'stripe';
import type { Processor } from '../processor-read';
import type { GatewayDeps } from '../gateway';
import {
  GatewayRefusal,
  GatewayUnanswered,
  type BankAccountDetails,
  type CardDetails,
  type ChargeOptions,
  type ChargeOutcome,
  type FindHints,
  type LaterOutcome,
  type PaymentGateway,
  type PaymentOwner,
} from '../gateway';
import { stripeCall, stripeClient } from './stripe-client';
import { knownStripeCustomer, stripeCustomerOf } from './stripe-customers';
import { achReturnOf, declineOf } from './stripe-declines';

/** When to ask again about an ACH debit still `processing` (Stripe's webhook usually tells first; ACH takes up to 4 business days). */
const ACH_CHECK_AFTER_SECONDS = 86_400;
/** Beyond the SDK's timeout, how long a lost create may still be on its way before the list is trusted. */
const LOOK_AFTER_MARGIN_MS = 2_000;
/** A create is sent at most twice (the second after a lost answer, answered from Stripe's idempotency store). */
const CREATE_SENDS = 2;
/** How far before the reservation a PaymentIntent of it is looked for (clocks differ). */
const CREATED_SLACK_SECONDS = 300;

type Kind = 'card' | 'ach';

/** `<card|ach>:<cus_… or empty>:<pm_…>`: what charging the method needs, in the one column kept. */
function tokenOf(kind: Kind, customer: string | undefined, paymentMethod: string): string {
  return `${kind}:${customer ?? ''}:${paymentMethod}`;
}

function parseToken(token: string): { kind: Kind; customer?: string; paymentMethod: string } {
  const [kind, customer, paymentMethod] = token.split(':');
  if ((kind !== 'card' && kind !== 'ach') || !paymentMethod) throw new GatewayRefusal('The payment method was not saved through Stripe; send the card or bank account again.');
  return { kind, customer: customer || undefined, paymentMethod };
}

const isAch = (intent: Stripe.PaymentIntent) => intent.payment_method_types.includes('us_bank_account');

/** Test keys only: a live key against anything but Stripe is refused by the configuration's check. */
export function stripeGateway(deps: GatewayDeps, processor: Processor, send?: { key: string; fetch: typeof fetch }): PaymentGateway {
  const { db, config } = deps;
  const timeoutMs = config.processorTimeoutMs;
  const stripe = stripeClient(processor.credentials.secret_key!, config.stripeApiUrl, timeoutMs, send);

  const cancel = (id: string) => stripeCall(() => stripe.paymentIntents.cancel(id, { cancellation_reason: 'abandoned' }, { idempotencyKey: `cancel-${id}` }));

  /** What a PaymentIntent Stripe answered means; one needing the payer (3-D Secure) cannot be finished here: canceled, declined. */
  async function outcomeOf(intent: Stripe.PaymentIntent): Promise<ChargeOutcome> {
    switch (intent.status) {
      case 'succeeded':
        return { status: 'succeeded', reference: intent.id };
      case 'processing':
        if (isAch(intent)) return { status: 'pending', reference: intent.id, checkAfterSeconds: ACH_CHECK_AFTER_SECONDS };
        throw new GatewayUnanswered(`Stripe is still processing ${intent.id}`);
      case 'requires_payment_method': {
        const error = intent.last_payment_error;
        if (!error) throw new GatewayUnanswered(`${intent.id} was never confirmed`);
        return { status: 'failed', reference: intent.id, ...declineOf(error.decline_code ?? error.code) };
      }
      case 'requires_action':
        await cancel(intent.id);
        return { status: 'failed', reference: intent.id, ...declineOf('authentication_required') };
      default:
        throw new GatewayUnanswered(`Stripe's PaymentIntent ${intent.id} is ${intent.status}`);
    }
  }

  async function confirm(intent: Stripe.PaymentIntent, kind: Kind, key: string, options: ChargeOptions): Promise<ChargeOutcome> {
    try {
      const confirmed = await stripeCall(() =>
        stripe.paymentIntents.confirm(
          intent.id,
          {
            ...(options.offSession ? { off_session: true } : {}),
            // The debtor's authorization of the debit, given to the agency (by the API or the Portal's checkbox).
            ...(kind === 'ach' ? { mandate_data: { customer_acceptance: { type: 'offline' } } } : {}),
          },
          { idempotencyKey: `confirm-${key}` },
        ),
      );
      return await outcomeOf(confirmed);
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) {
        return { status: 'failed', reference: error.payment_intent?.id ?? intent.id, ...declineOf(error.decline_code ?? error.code) };
      }
      throw error;
    }
  }

  /** The PaymentIntent of our charge `key`, found in the recent ones of the customer (or of the account) by its metadata. */
  async function lookFor(key: string, hints: FindHints): Promise<Stripe.PaymentIntent | undefined> {
    const reservedAt = hints.reservedAt?.getTime() ?? 0;
    // A create still in flight could yet make it: not before the SDK's timeout has passed on both
    // of its sends.
    if (Date.now() < reservedAt + CREATE_SENDS * timeoutMs + LOOK_AFTER_MARGIN_MS) throw new GatewayUnanswered('Too early to tell whether the PaymentIntent was created; asked again later.');
    const customer = hints.customerId ? await knownStripeCustomer(db, processor.id, hints.customerId) : undefined;
    const listed = stripe.paymentIntents.list({ ...(customer ? { customer } : {}), created: { gte: Math.floor(reservedAt / 1000) - CREATED_SLACK_SECONDS }, limit: 100 });
    return stripeCall(async () => {
      for await (const intent of listed) if (intent.metadata?.charge_id === key) return intent;
      return undefined;
    });
  }

  return {
    name: 'stripe',

    async tokenizeCard(card: CardDetails, owner?: PaymentOwner): Promise<string> {
      const method = await stripeCall(() =>
        stripe.paymentMethods.create({ type: 'card', card: { number: card.number, exp_month: card.expMonth, exp_year: card.expYear }, ...(owner ? { billing_details: { name: owner.name } } : {}) }),
      ).catch((error: unknown) => {
        // A number Stripe does not take (a card error before any charge): the details are refused.
        if (error instanceof Stripe.errors.StripeCardError) throw new GatewayRefusal(error.message);
        throw error;
      });
      const customer = owner && (await stripeCustomerOf(db, stripe, processor.id, owner));
      if (customer) await stripeCall(() => stripe.paymentMethods.attach(method.id, { customer }));
      return tokenOf('card', customer, method.id);
    },

    async tokenizeBankAccount(account: BankAccountDetails, owner?: PaymentOwner): Promise<string> {
      const method = await stripeCall(() =>
        stripe.paymentMethods.create({
          type: 'us_bank_account',
          us_bank_account: { routing_number: account.routingNumber, account_number: account.accountNumber, account_holder_type: 'individual', account_type: account.accountType ?? 'checking' },
          billing_details: { name: account.holderName ?? owner?.name ?? 'Account holder' },
        }),
      );
      const customer = owner && (await stripeCustomerOf(db, stripe, processor.id, owner));
      if (customer) await stripeCall(() => stripe.paymentMethods.attach(method.id, { customer }));
      return tokenOf('ach', customer, method.id);
    },

    async charge(token: string, amount: number, key: string, options: ChargeOptions = {}): Promise<ChargeOutcome> {
      const { kind, customer, paymentMethod } = parseToken(token);
      const create = () =>
        stripeCall(() =>
          stripe.paymentIntents.create(
            {
              amount,
              currency: 'usd',
              ...(customer ? { customer } : {}),
              payment_method: paymentMethod,
              allowed_payment_method_types: [kind === 'ach' ? 'us_bank_account' : 'card'],
              metadata: { charge_id: key },
              confirm: false,
            },
            { idempotencyKey: key },
          ),
        );
      // A create whose answer was lost is sent once more with the same key: Stripe answers it from
      // its idempotency store (the same PaymentIntent) if the first one arrived. Nothing is
      // confirmed yet, so sending it again can take no money.
      const intent = await create().catch((error: unknown) => {
        if (error instanceof GatewayUnanswered) return create();
        throw error;
      });
      if (options.recordReference && !(await options.recordReference(intent.id))) {
        // The charge was finished without it (recovery gave up on it): it must never be confirmed.
        await cancel(intent.id).catch(() => undefined);
        throw new GatewayUnanswered(`The charge was finished before ${intent.id} was confirmed; it was canceled instead.`);
      }
      return confirm(intent, kind, key, options);
    },

    async void(reference: string, idempotencyKey: string): Promise<void> {
      const intent = await stripeCall(() => stripe.paymentIntents.retrieve(reference));
      if (intent.status === 'requires_capture') {
        await stripeCall(() => stripe.paymentIntents.cancel(reference, {}, { idempotencyKey }));
        return;
      }
      if (intent.status !== 'succeeded') throw new GatewayRefusal(`Stripe cannot void a PaymentIntent that is ${intent.status}${isAch(intent) ? ' (an ACH debit can be refunded once it has settled)' : ''}.`);
      // Captured already (Stripe captures at once): given back in full.
      await stripeCall(() => stripe.refunds.create({ payment_intent: reference }, { idempotencyKey }));
    },

    async refund(reference: string, amount: number, idempotencyKey: string): Promise<void> {
      await stripeCall(() => stripe.refunds.create({ payment_intent: reference, amount }, { idempotencyKey }));
    },

    async find(key: string, hints: FindHints = {}): Promise<ChargeOutcome | undefined> {
      const intent = hints.reference ? await stripeCall(() => stripe.paymentIntents.retrieve(hints.reference!)) : await lookFor(key, hints);
      if (!intent) return undefined;
      const unconfirmed = intent.status === 'requires_confirmation' || (intent.status === 'requires_payment_method' && !intent.last_payment_error);
      if (intent.status === 'canceled') return undefined;
      if (!unconfirmed) return outcomeOf(intent);
      // Never confirmed: canceled, so that a confirm still on its way fails. Confirmed meanwhile: its outcome.
      try {
        await cancel(intent.id);
        return undefined;
      } catch (error) {
        if (!(error instanceof GatewayRefusal)) throw error;
        return outcomeOf(await stripeCall(() => stripe.paymentIntents.retrieve(intent.id)));
      }
    },

    async outcome(reference: string): Promise<LaterOutcome> {
      const intent = await stripeCall(() => stripe.paymentIntents.retrieve(reference, { expand: ['latest_charge'] }));
      if (intent.status === 'succeeded') return { status: 'settled' };
      if (intent.status === 'processing') return { status: 'pending', checkAfterSeconds: ACH_CHECK_AFTER_SECONDS };
      const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
      const error = intent.last_payment_error;
      // A card payment that failed after all (declined once the network answered): a decline, nothing taken.
      if (!isAch(intent)) return { status: 'failed', ...declineOf(error?.decline_code ?? error?.code ?? charge?.failure_code) };
      const code = charge?.failure_code ?? error?.code;
      return { status: 'returned', ...achReturnOf(code, charge?.failure_message ?? error?.message) };
    },
  };
}

/** One harmless call with the key (its balance): the processor's refusal, or undefined when it accepts it. */
export async function stripeRefusal(secretKey: string, apiUrl: string, timeoutMs: number): Promise<string | undefined> {
  try {
    await stripeCall(() => stripeClient(secretKey, apiUrl, timeoutMs).balance.retrieve());
    return undefined;
  } catch (error) {
    if (error instanceof GatewayRefusal) return `Stripe refused the credentials: ${error.message}`;
    return `Stripe could not be reached to check the credentials (${(error as Error).message}); nothing was saved.`;
  }
}
