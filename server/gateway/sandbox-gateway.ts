/**
 * The sandbox gateway: a simulator in the spirit of Stripe's test mode, with its own vault
 * (`sandbox_vault`, numbers sealed with the data key) and its own ledger of payments
 * (`sandbox_payments`). What it answers depends only on the test number behind the token:
 * the tables below, which the document repeats for integrators.
 *
 * It behaves like a processor outside our database even though its tables live in it: it is
 * never handed a transaction of ours (it refuses one), each request runs in a short
 * transaction of its own on a pooled connection (a charge, the busiest, in one statement with
 * those asked at the same time: it holds a connection only for that statement, never across its
 * simulated wait), and its ledger
 * of requests (`sandbox_requests`, by our idempotency key) answers a repeat as the first time. It answers
 * as slowly as it is told (SANDBOX_GATEWAY_LATENCY_MS: a median, each answer drawn around it),
 * half on the way in and half on the way out, so a process can die on either side.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';
import { batcher, type Batcher } from '../kernel/batcher';
import {
  GatewayRefusal,
  GatewayUnanswered,
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
const REQUESTS = 'sandbox_requests';

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

/** What the ledger keeps per key: an answer, or that the key was given up on before it arrived. */
type Stored = ChargeOutcome | { status: 'done' } | { status: 'never_received' };

/** What a vaulted token's number makes a charge do. */
type Behaviour = { kind: 'ach' } | { kind: 'card'; decline?: { code: DeclineCode; message: string } };

/** Tokens' behaviours known to this process, at most this many (the oldest forgotten first). */
const BEHAVIOURS_KEPT = 10_000;
const behaviours = new Map<string, Behaviour>();

const newId = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url')}`;

export interface SandboxOptions {
  /** How long an ACH debit stays pending before it settles or is returned. */
  achSettlementSeconds: number;
  /** The median time the simulator takes to answer a request that moves money or asks about one. */
  latencyMs?: number;
  /** Test only: a charge of exactly this many cents is made, and its answer lost. */
  loseAnswerOfCents?: number;
}

/** A time around `median`: log-normal, so half the answers are faster and a few much slower. */
export function jittered(median: number, random = Math.random): number {
  if (median <= 0) return 0;
  const gaussian = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.max(0, Math.round(median * Math.exp(0.25 * gaussian)));
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((done) => setTimeout(done, ms)) : Promise.resolve());

/** A charge's claim: its key, and the payment to make when the key is new. */
interface ChargeClaim {
  tenant: Tenant;
  idempotencyKey: string;
  token: string;
  amount: number;
  outcome: ChargeOutcome;
}

/**
 * Claims the keys of `claims` and makes the payments of those that are new, in ONE statement
 * (its own transaction); answers, for each, whether its key was new. The simulator's work is
 * a real processor's, not ours: done in few statements, it takes little of the database and the
 * machine the service shares with it. Keys are unique within `claims`.
 */
async function claimCharges(db: Knex, claims: ChargeClaim[]): Promise<boolean[]> {
  const column = <T>(pick: (claim: ChargeClaim) => T) => claims.map(pick);
  const { rows } = await db.raw(
    `WITH input AS (
       SELECT * FROM unnest(?::uuid[], ?::environment[], ?::text[], ?::jsonb[], ?::text[], ?::text[], ?::bigint[], ?::text[])
         AS input(organization_id, environment, idempotency_key, answer, reference, token, amount, status)
     ), claimed AS (
       INSERT INTO ${REQUESTS} (organization_id, environment, idempotency_key, kind, answer)
       SELECT organization_id, environment, idempotency_key, 'charge', answer FROM input
       ON CONFLICT (organization_id, environment, idempotency_key) DO NOTHING
       RETURNING organization_id, environment, idempotency_key
     ), paid AS (
       INSERT INTO ${PAYMENTS} (organization_id, environment, reference, token, amount, status)
       SELECT input.organization_id, input.environment, input.reference, input.token, input.amount, input.status
         FROM input JOIN claimed USING (organization_id, environment, idempotency_key)
     )
     SELECT organization_id, environment, idempotency_key FROM claimed`,
    [
      column((claim) => claim.tenant.organizationId),
      column((claim) => claim.tenant.environment),
      column((claim) => claim.idempotencyKey),
      column((claim) => JSON.stringify(claim.outcome)),
      column((claim) => claim.outcome.reference),
      column((claim) => claim.token),
      column((claim) => claim.amount),
      column((claim) => claim.outcome.status),
    ],
  );
  const claimed = new Set((rows as { organization_id: string; environment: string; idempotency_key: string }[]).map((row) => claimKey(row.organization_id, row.environment, row.idempotency_key)));
  return claims.map((claim) => claimed.has(claimKey(claim.tenant.organizationId, claim.tenant.environment, claim.idempotencyKey)));
}

const claimKey = (organizationId: string, environment: string, idempotencyKey: string) => `${organizationId}:${environment}:${idempotencyKey}`;

/** Claims in one statement at once per pool. */
const CLAIM_BATCHES = 2;
const claimBatchers = new WeakMap<Knex, Batcher<ChargeClaim, boolean>>();

/**
 * Whether `claim`'s key was new (its payment made), claimed with the others asked at the same
 * time (kernel/batcher.ts). The same key twice in one batch: the second is claimed after it,
 * alone, and finds the first's.
 */
function claimInBatch(db: Knex, claim: ChargeClaim): Promise<boolean> {
  let claims = claimBatchers.get(db);
  if (!claims) {
    claims = batcher<ChargeClaim, boolean>(
      async (batch) => {
        const keys = new Set<string>();
        const first = batch.filter((each) => {
          const key = claimKey(each.tenant.organizationId, each.tenant.environment, each.idempotencyKey);
          return !keys.has(key) && keys.add(key);
        });
        const answered = new Map<ChargeClaim, boolean>();
        (await claimCharges(db, first)).forEach((isNew, index) => answered.set(first[index]!, isNew));
        for (const again of batch.filter((each) => !answered.has(each))) answered.set(again, (await claimCharges(db, [again]))[0]!);
        return batch.map((each) => answered.get(each)!);
      },
      { parallel: CLAIM_BATCHES },
    );
    claimBatchers.set(db, claims);
  }
  return claims.add(claim);
}

export function sandboxGateway(db: Knex, tenant: Tenant, secrets: SecretBox, options: SandboxOptions): PaymentGateway {
  if (db.isTransaction) throw new Error('The sandbox gateway is outside our transactions: hand it the pool, not a transaction');
  const key = (idempotencyKey: string) => ({ ...tenantColumns(tenant), idempotency_key: idempotencyKey });

  /** A request as a real processor takes it: half the latency in, the work in its own transaction, half out. */
  async function request<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const total = jittered(options.latencyMs ?? 0);
    await sleep(total / 2);
    const answer = await db.transaction(work);
    await sleep(total - total / 2);
    return answer;
  }

  async function payment(trx: Knex, reference: string): Promise<PaymentRow> {
    const row = (await trx(PAYMENTS).where(tenantColumns(tenant)).where({ reference }).forUpdate().first('reference', 'token', 'amount', 'refunded_amount', 'status')) as PaymentRow | undefined;
    if (!row) throw new GatewayRefusal(`No such payment: ${reference}`);
    return row;
  }

  async function vaulted(trx: Knex, token: string): Promise<VaultRow> {
    const row = (await trx(VAULT).where(tenantColumns(tenant)).where({ token }).first('token', 'kind', 'number_sealed')) as VaultRow | undefined;
    if (!row) throw new GatewayRefusal('No such token.');
    return row;
  }

  /**
   * Takes the key for `kind`: undefined when it is new (the caller does the work and stores its
   * answer), else what the first request with it answered. A request racing with the first
   * waits here until the first commits.
   */
  async function claim(trx: Knex, idempotencyKey: string, kind: 'charge' | 'void' | 'refund', answer: Stored | null = null): Promise<Stored | undefined> {
    const taken = await trx(REQUESTS)
      .insert({ ...key(idempotencyKey), kind, answer: answer && JSON.stringify(answer) })
      .onConflict(['organization_id', 'environment', 'idempotency_key'])
      .ignore()
      .returning('kind');
    if (taken.length > 0) return undefined;
    const row = (await trx(REQUESTS).where(key(idempotencyKey)).first('kind', 'answer')) as { kind: string; answer: Stored | null };
    if (row.kind !== kind) throw new GatewayRefusal(`The idempotency key was used for a ${row.kind}.`);
    return row.answer ?? { status: 'never_received' };
  }

  /** What a token's number makes a charge do: known from its tokenization or read once from the vault, then kept (a token's number never changes). */
  async function behaviour(token: string): Promise<Behaviour> {
    const known = behaviours.get(behaviourKey(token));
    if (known) return known;
    const source = await vaulted(db, token);
    return remember(token, source.kind === 'ach' ? { kind: 'ach' } : { kind: 'card', decline: SANDBOX_DECLINES[secrets.decrypt(source.number_sealed)] });
  }

  const behaviourKey = (token: string) => `${tenant.organizationId}:${tenant.environment}:${token}`;
  function remember(token: string, found: Behaviour): Behaviour {
    if (behaviours.size >= BEHAVIOURS_KEPT) behaviours.delete(behaviours.keys().next().value!);
    behaviours.set(behaviourKey(token), found);
    return found;
  }

  /**
   * A charge carried out once per key, in one statement (its own transaction, as short as can
   * be) with the charges asked at the same time (`claimCharges`): the key claimed with its
   * answer, and the payment made only when the claim is new. A key already taken answers what it
   * holds; a request racing with the first waits on the key's row until the first commits.
   */
  async function chargeOnce(token: string, amount: number, idempotencyKey: string): Promise<ChargeOutcome> {
    const source = await behaviour(token);
    const reference = newId('pay');
    const outcome: ChargeOutcome =
      source.kind === 'ach'
        ? { status: 'pending', reference, checkAfterSeconds: options.achSettlementSeconds }
        : source.decline
          ? { status: 'failed', reference, ...source.decline }
          : { status: 'succeeded', reference };
    if (await claimInBatch(db, { tenant, idempotencyKey, token, amount, outcome })) return outcome;
    const row = (await db(REQUESTS).where(key(idempotencyKey)).first('kind', 'answer')) as { kind: string; answer: Stored | null };
    if (row.kind !== 'charge') throw new GatewayRefusal(`The idempotency key was used for a ${row.kind}.`);
    const earlier = row.answer ?? { status: 'never_received' };
    if (earlier.status === 'never_received') {
      // Given up on (find() answered "never received"): refused, no money moves.
      return { status: 'failed', reference: newId('pay'), code: 'processing_error', message: 'The payment gateway gave up on this charge before it arrived; no money was moved.' };
    }
    return earlier as ChargeOutcome;
  }

  const store = (trx: Knex, idempotencyKey: string, answer: Stored) => trx(REQUESTS).where(key(idempotencyKey)).update({ answer: JSON.stringify(answer) });

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
      remember(token, { kind: 'card', decline: SANDBOX_DECLINES[card.number] });
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
      remember(token, { kind: 'ach' });
      return token;
    },

    async charge(token: string, amount: number, idempotencyKey: string): Promise<ChargeOutcome> {
      const total = jittered(options.latencyMs ?? 0);
      await sleep(total / 2);
      const answer = await chargeOnce(token, amount, idempotencyKey);
      await sleep(total - total / 2);
      if (options.loseAnswerOfCents === amount) throw new GatewayUnanswered('Test fault: the answer of the sandbox gateway was lost.');
      return answer;
    },

    async find(idempotencyKey: string): Promise<ChargeOutcome | undefined> {
      return request(async (trx) => {
        const stored = await claim(trx, idempotencyKey, 'charge', { status: 'never_received' });
        return stored && stored.status !== 'never_received' && stored.status !== 'done' ? stored : undefined;
      });
    },

    async void(reference: string, idempotencyKey: string): Promise<void> {
      await request(async (trx) => {
        if (await claim(trx, idempotencyKey, 'void')) return;
        const row = await payment(trx, reference);
        if (row.status !== 'succeeded' && row.status !== 'pending') throw new GatewayRefusal(`A ${row.status} payment cannot be voided.`);
        if (Number(row.refunded_amount) > 0) throw new GatewayRefusal('A refunded payment cannot be voided.');
        await trx(PAYMENTS).where(tenantColumns(tenant)).where({ reference }).update({ status: 'voided', updated_at: trx.fn.now() });
        await store(trx, idempotencyKey, { status: 'done' });
      });
    },

    async refund(reference: string, amount: number, idempotencyKey: string): Promise<void> {
      await request(async (trx) => {
        if (await claim(trx, idempotencyKey, 'refund')) return;
        const row = await payment(trx, reference);
        if (row.status !== 'succeeded' && row.status !== 'settled') throw new GatewayRefusal(`A ${row.status} payment cannot be refunded.`);
        if (Number(row.refunded_amount) + amount > Number(row.amount)) throw new GatewayRefusal('The refund exceeds what is left of the payment.');
        await trx(PAYMENTS)
          .where(tenantColumns(tenant))
          .where({ reference })
          .update({ refunded_amount: trx.raw('refunded_amount + ?', [amount]), updated_at: trx.fn.now() });
        await store(trx, idempotencyKey, { status: 'done' });
      });
    },

    /** Asked by the settlement job once the settlement time has passed: decided then, from the account number. */
    async outcome(reference: string): Promise<LaterOutcome> {
      return request(async (trx) => {
        const row = await payment(trx, reference);
        if (row.status !== 'pending' && row.status !== 'settled' && row.status !== 'returned') {
          throw new GatewayRefusal(`A ${row.status} payment has no later outcome.`);
        }
        const source = await vaulted(trx, row.token);
        const returned = SANDBOX_RETURNS[secrets.decrypt(source.number_sealed)];
        // Asked again (a retried job): the same answer.
        if (row.status === 'pending') {
          await trx(PAYMENTS)
            .where(tenantColumns(tenant))
            .where({ reference })
            .update({ status: returned ? 'returned' : 'settled', return_code: returned?.code ?? null, updated_at: trx.fn.now() });
        }
        return returned ? { status: 'returned', ...returned } : { status: 'settled' };
      });
    },
  };
}
