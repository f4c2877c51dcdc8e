/**
 * The sandbox gateway: a simulator in the spirit of Stripe's test mode, with its own vault
 * (`sandbox_vault`, numbers sealed with the data key) and its own ledger of payments
 * (`sandbox_payments`). What it answers depends only on the test number behind the token:
 * the tables below, which the document repeats for integrators.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';
import {
  GatewayRefusal,
  type AchReturnCode,
  type BankAccountDetails,
  type CardDetails,
  type ChargeOutcome,
  type DeclineCode,
  type LaterOutcome,
  type PaymentGateway,
} from './gateway';

/** Cards that are declined, and why; any other valid number succeeds. */
export const SANDBOX_DECLINES: Record<string, { code: DeclineCode; message: string }> = {
  '4000000000000002': { code: 'card_declined', message: 'The card was declined.' },
  '4000000000009995': { code: 'insufficient_funds', message: 'The card has insufficient funds.' },
  '4000000000000069': { code: 'expired_card', message: 'The card has expired.' },
  '4000000000000127': { code: 'incorrect_cvc', message: "The card's security code is incorrect." },
  '4000000000000119': { code: 'processing_error', message: 'An error occurred while processing the card.' },
};

/** Bank accounts whose debits are returned, and with which code; any other settles. */
export const SANDBOX_RETURNS: Record<string, { code: AchReturnCode; message: string }> = {
  '000222222227': { code: 'R01', message: 'Insufficient funds.' },
  '000111111113': { code: 'R02', message: 'Account closed.' },
  '000111111116': { code: 'R03', message: 'No account / unable to locate account.' },
  '000333333335': { code: 'R10', message: 'Customer advises not authorized.' },
};

const VAULT = 'sandbox_vault';
const PAYMENTS = 'sandbox_payments';

interface VaultRow {
  token: string;
  kind: 'card' | 'ach';
  number_sealed: string;
}

interface PaymentRow {
  reference: string;
  token: string;
  amount: string;
  refunded_amount: string;
  status: 'succeeded' | 'failed' | 'pending' | 'settled' | 'returned' | 'voided';
}

const newId = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url')}`;

export interface SandboxOptions {
  /** How long an ACH debit stays pending before it settles or is returned. */
  achSettlementSeconds: number;
}

export function sandboxGateway(db: Knex, tenant: Tenant, secrets: SecretBox, options: SandboxOptions): PaymentGateway {
  const vault = () => db(VAULT).where(tenantColumns(tenant));
  const payments = () => db(PAYMENTS).where(tenantColumns(tenant));

  async function payment(reference: string, forUpdate = false): Promise<PaymentRow> {
    const query = payments().where({ reference }).first('reference', 'token', 'amount', 'refunded_amount', 'status');
    const row = (await (forUpdate ? query.forUpdate() : query)) as PaymentRow | undefined;
    if (!row) throw new GatewayRefusal(`No such payment: ${reference}`);
    return row;
  }

  async function vaulted(token: string): Promise<VaultRow> {
    const row = (await vault().where({ token }).first('token', 'kind', 'number_sealed')) as VaultRow | undefined;
    if (!row) throw new GatewayRefusal('No such token.');
    return row;
  }

  async function record(reference: string, token: string, amount: number, status: PaymentRow['status']): Promise<void> {
    await db(PAYMENTS).insert({ reference, token, amount, status, ...tenantColumns(tenant) });
  }

  return {
    name: 'sandbox',

    async tokenizeCard(card: CardDetails): Promise<string> {
      const token = newId('tok_card');
      await db(VAULT).insert({
        token,
        kind: 'card',
        number_sealed: secrets.encrypt(card.number),
        exp_month: card.expMonth,
        exp_year: card.expYear,
        ...tenantColumns(tenant),
      });
      return token;
    },

    async tokenizeBankAccount(account: BankAccountDetails): Promise<string> {
      const token = newId('tok_bank');
      await db(VAULT).insert({
        token,
        kind: 'ach',
        number_sealed: secrets.encrypt(account.accountNumber),
        routing_number_sealed: secrets.encrypt(account.routingNumber),
        ...tenantColumns(tenant),
      });
      return token;
    },

    async charge(token: string, amount: number): Promise<ChargeOutcome> {
      const source = await vaulted(token);
      const reference = newId('pay');
      if (source.kind === 'ach') {
        await record(reference, token, amount, 'pending');
        return { status: 'pending', reference, checkAfterSeconds: options.achSettlementSeconds };
      }
      const decline = SANDBOX_DECLINES[secrets.decrypt(source.number_sealed)];
      await record(reference, token, amount, decline ? 'failed' : 'succeeded');
      return decline ? { status: 'failed', reference, ...decline } : { status: 'succeeded', reference };
    },

    async void(reference: string): Promise<void> {
      const row = await payment(reference, true);
      if (row.status !== 'succeeded' && row.status !== 'pending') throw new GatewayRefusal(`A ${row.status} payment cannot be voided.`);
      if (Number(row.refunded_amount) > 0) throw new GatewayRefusal('A refunded payment cannot be voided.');
      await payments().where({ reference }).update({ status: 'voided', updated_at: db.fn.now() });
    },

    async refund(reference: string, amount: number): Promise<void> {
      const row = await payment(reference, true);
      if (row.status !== 'succeeded' && row.status !== 'settled') throw new GatewayRefusal(`A ${row.status} payment cannot be refunded.`);
      if (Number(row.refunded_amount) + amount > Number(row.amount)) throw new GatewayRefusal('The refund exceeds what is left of the payment.');
      await payments()
        .where({ reference })
        .update({ refunded_amount: db.raw('refunded_amount + ?', [amount]), updated_at: db.fn.now() });
    },

    /** Asked by the settlement job once the settlement time has passed: decided then, from the account number. */
    async outcome(reference: string): Promise<LaterOutcome> {
      const row = await payment(reference, true);
      if (row.status !== 'pending' && row.status !== 'settled' && row.status !== 'returned') {
        throw new GatewayRefusal(`A ${row.status} payment has no later outcome.`);
      }
      const source = await vaulted(row.token);
      const returned = SANDBOX_RETURNS[secrets.decrypt(source.number_sealed)];
      // Asked again (a retried job): the same answer.
      if (row.status !== 'pending') return returned ? { status: 'returned', ...returned } : { status: 'settled' };
      await payments()
        .where({ reference })
        .update({ status: returned ? 'returned' : 'settled', return_code: returned?.code ?? null, updated_at: db.fn.now() });
      return returned ? { status: 'returned', ...returned } : { status: 'settled' };
    },
  };
}
