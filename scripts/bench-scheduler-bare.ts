/**
 * The bare-SQL baseline of bench:scheduler: the rows the due-work job makes for a plan's
 * instalment, made by hand-written SQL with no service code, in the same number of
 * transactions, at the same number in flight and on a pool of the same size — the ceiling this
 * database allows. The job works in batches (server/kernel/batcher.ts: the instalments
 * that start together are started in one transaction, the answers that arrive together are
 * recorded in one), and so does this baseline, through the same batcher with the same batch size
 * and as many batches at once: per batch of instalments, as the real path does,
 * 1. reserve (one transaction per batch): the accounts, plans and instalments locked; the
 *    attempt rows; the charges `processing`; the instalments in flight (no `due_at`), each a
 *    multi-row statement;
 * 2. the gateway's own statement, per instalment: its request keyed by the charge with its
 *    answer, and its payment (as the sandbox gateway makes it);
 * 3. record (one transaction per batch of answers): the accounts and charges locked; the charges
 *    succeeded; their allocations and transactions; the balances; the attempts paid; the
 *    instalments succeeded; the plans completed after their last instalment; the events in the
 *    event log, each one set-based statement for the whole batch.
 * The events' payloads come in two kinds (`--bare-payloads`):
 * - `rows` (the default): row dumps (to_jsonb of the charge with its transactions, the account,
 *   the plan with its instalments), 8.3 kB of JSON per instalment against our 46.1 kB. Lighter
 *   than ours: not the same rows, but the only baseline that is still a ceiling.
 * - `documented`: our events in our order (each instalment's charge.succeeded and
 *   debt-account.update, then each plan's payment-plan.update, named by its account) with the
 *   documented payloads (openapi EventCharge, EventDebtAccount, EventPaymentPlan: an account
 *   embeds its location, its customer's summary, its latest 10 charges and transactions, its plan
 *   with its instalments, method and account ...), built by the database from the rows as they
 *   now are (bench-scheduler-bare-payloads.ts); bench-scheduler.ts then checks that the names and
 *   counts of the events and the key sets of their payloads are ours, and their JSON within 10%
 *   of ours in size. The same rows, but no ceiling: built by the database these payloads cost it
 *   9-14 ms of CPU per instalment against 1.8-3.2 for the row dumps (10,000 and 2,000 instalments),
 *   several times what our process spends building them, and our job runs 1.25-1.64x its rate.
 * Either way stored as their JSON text (the event log's body column, uncompressed).
 * Set-based where hand-written SQL naturally is: that is what a ceiling means, so the ratio
 * tells what the service's code costs over it. A plan's instalments run one after another, in
 * order, as the job's lanes do.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { groupBy } from '../server/kernel/collections';
import { batcher } from '../server/kernel/batcher';
import { createBarePayloadFunctions } from './bench-scheduler-bare-payloads';

/** The baseline's event payloads: row dumps (a ceiling) or the documented ones built by the database (the same rows). */
export type BarePayloads = 'rows' | 'documented';

interface Due {
  id: string;
  payment_plan_id: string;
  seq: number;
}

interface Reserved {
  id: string;
  amount: string;
  plan_id: string;
  account_id: string;
  gateway_token: string;
  attempt: number;
  chargeId: string;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url')}`;

/** Step 1 for a batch of due instalments: answers those reserved (undefined: no longer due). */
async function reserveBatch(db: Knex, org: string, ids: string[]): Promise<(Reserved | undefined)[]> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw(
      `SELECT i.id, i.amount, i.attempts, p.id AS plan_id, a.id AS account_id, a.customer_id, m.id AS method_id, m.gateway_token,
              m.card_holder, m.card_last4, m.card_exp_month, m.card_exp_year, m.card_brand, m.card_zip, c.email
         FROM payment_plan_charges i
         JOIN payment_plans p ON p.id = i.payment_plan_id
         JOIN debt_accounts a ON a.id = p.debt_account_id
         JOIN payment_methods m ON m.id = p.payment_method_id
         JOIN customers c ON c.id = a.customer_id
        WHERE i.id = ANY(?::uuid[]) AND i.status = 'pending' AND i.due_at IS NOT NULL
        ORDER BY a.id
          FOR UPDATE OF a, p, i`,
      [ids],
    );
    if (rows.length === 0) return ids.map(() => undefined);
    const { rows: charges } = await trx.raw(
      `INSERT INTO charges (organization_id, environment, reference_number, debt_account_id, customer_id, payment_method_id, payment_method_type, card, gateway, amount, email, source, payment_plan_id, payment_plan_charge_id, status)
       SELECT ?, 'sandbox', r.reference, r.account_id, r.customer_id, r.method_id, 'card', r.card, 'sandbox', r.amount, r.email, 'payment_plan', r.plan_id, r.id, 'processing'
         FROM jsonb_to_recordset(?::jsonb) AS r(reference text, account_id uuid, customer_id uuid, method_id uuid, card jsonb, amount bigint, email text, plan_id uuid, id uuid)
       RETURNING id, payment_plan_charge_id`,
      [
        org,
        JSON.stringify(
          rows.map((row: Record<string, unknown>) => ({
            reference: `CH-${randomBytes(5).toString('hex').toUpperCase()}`,
            account_id: row.account_id,
            customer_id: row.customer_id,
            method_id: row.method_id,
            card: { card_holder: row.card_holder, card_number: row.card_last4, expiration_month: row.card_exp_month, expiration_year: row.card_exp_year, card_type: row.card_brand, card_zip: row.card_zip },
            amount: row.amount,
            email: row.email,
            plan_id: row.plan_id,
            id: row.id,
          })),
        ),
      ],
    );
    const chargeOf = new Map<string, string>(charges.map((charge: { id: string; payment_plan_charge_id: string }) => [charge.payment_plan_charge_id, charge.id]));
    const reserved: Reserved[] = rows.map((row: Record<string, unknown>) => ({
      id: row.id as string,
      amount: row.amount as string,
      plan_id: row.plan_id as string,
      account_id: row.account_id as string,
      gateway_token: row.gateway_token as string,
      attempt: (row.attempts as number) + 1,
      chargeId: chargeOf.get(row.id as string)!,
    }));
    await trx.raw(
      `INSERT INTO payment_plan_charge_attempts (payment_plan_charge_id, attempt, organization_id, environment, outcome, charge_id)
       SELECT unnest(?::uuid[]), unnest(?::int[]), ?, 'sandbox', 'started', unnest(?::uuid[])`,
      [reserved.map((r) => r.id), reserved.map((r) => r.attempt), org, reserved.map((r) => r.chargeId)],
    );
    await trx.raw(
      `UPDATE payment_plan_charges i SET due_at = NULL, charge_id = v.charge_id, updated_at = now()
         FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::uuid[]) AS charge_id) v WHERE i.id = v.id`,
      [reserved.map((r) => r.id), reserved.map((r) => r.chargeId)],
    );
    const byId = new Map(reserved.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id));
  });
}

/**
 * Step 2: the gateway's own statement, per instalment, as the sandbox gateway makes it (its key
 * claimed with its answer and the payment made in one statement; what a token does is known
 * from its tokenization, so the vault is not read).
 */
async function gatewayCharge(db: Knex, org: string, reserved: Reserved): Promise<string> {
  const reference = newId('pay');
  await db.raw(
    `WITH claimed AS (
       INSERT INTO sandbox_requests (organization_id, environment, idempotency_key, kind, answer) VALUES (?, 'sandbox', ?, 'charge', ?::jsonb)
       ON CONFLICT (organization_id, environment, idempotency_key) DO NOTHING
       RETURNING 1
     ), paid AS (
       INSERT INTO sandbox_payments (organization_id, environment, reference, token, amount, status)
       SELECT ?, 'sandbox', ?, ?, ?, 'succeeded' WHERE EXISTS (SELECT 1 FROM claimed)
     )
     SELECT EXISTS (SELECT 1 FROM claimed) AS claimed`,
    [org, reserved.chargeId, JSON.stringify({ status: 'succeeded', reference }), org, reference, reserved.gateway_token, reserved.amount],
  );
  return reference;
}

/**
 * The events of a batch of answers, by the kind of payload: per instalment (`n`) its
 * charge.succeeded (`k` 1), debt-account.update (2) and payment-plan.update (3), bound to the
 * charges, the accounts and, for the plan's event, `planEventOf`'s ids (the plans for row dumps,
 * the accounts for ours).
 */
const EVENTS: Record<BarePayloads, { select: string; order: string; planEventOf: 'plan' | 'account' }> = {
  // Row dumps, each instalment's three together; the plan's event named by the plan.
  rows: {
    select: `
      SELECT x.n, 1 AS k, 'charge.succeeded' AS name, ch.id AS object_id, to_jsonb(ch) || jsonb_build_object('transactions', (SELECT jsonb_agg(to_jsonb(t)) FROM transactions t WHERE t.charge_id = ch.id)) AS payload
        FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN charges ch ON ch.id = x.id
      UNION ALL
      SELECT x.n, 2, 'debt-account.update', a.id, to_jsonb(a) FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN debt_accounts a ON a.id = x.id
      UNION ALL
      SELECT x.n, 3, 'payment-plan.update', p.id, to_jsonb(p) || jsonb_build_object('charges', (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.seq) FROM payment_plan_charges i WHERE i.payment_plan_id = p.id))
        FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN payment_plans p ON p.id = x.id`,
    order: 'e.n, e.k',
    planEventOf: 'plan',
  },
  // Ours (bench-scheduler-bare-payloads.ts), in our order: each instalment's charge.succeeded and
  // debt-account.update, then the plans' payment-plan.update, named by their accounts.
  documented: {
    select: `
      SELECT x.n, 1 AS k, 'charge.succeeded' AS name, ch.id AS object_id, bare_charge_event(ch) AS payload
        FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN charges ch ON ch.id = x.id
      UNION ALL
      SELECT x.n, 2, 'debt-account.update', a.id, bare_account_event(a) FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN debt_accounts a ON a.id = x.id
      UNION ALL
      SELECT x.n, 3, 'payment-plan.update', a.id, bare_plan_event(a) FROM unnest(?::uuid[]) WITH ORDINALITY AS x(id, n) JOIN debt_accounts a ON a.id = x.id`,
    order: 'e.k = 3, e.n, e.k',
    planEventOf: 'account',
  },
};

/** Step 3 for a batch of answers. */
async function recordBatch(db: Knex, org: string, payloads: BarePayloads, answers: { reserved: Reserved; reference: string }[]): Promise<void[]> {
  const v = {
    charge: answers.map((a) => a.reserved.chargeId),
    account: answers.map((a) => a.reserved.account_id),
    amount: answers.map((a) => a.reserved.amount),
    reference: answers.map((a) => a.reference),
    instalment: answers.map((a) => a.reserved.id),
    attempt: answers.map((a) => a.reserved.attempt),
    plan: answers.map((a) => a.reserved.plan_id),
  };
  await db.transaction(async (trx) => {
    await trx.raw(`SELECT id FROM debt_accounts WHERE id = ANY(?::uuid[]) ORDER BY id FOR UPDATE`, [v.account]);
    await trx.raw(`SELECT id FROM charges WHERE id = ANY(?::uuid[]) ORDER BY id FOR UPDATE`, [v.charge]);
    await trx.raw(
      `UPDATE charges ch SET status = 'succeeded', gateway_reference = x.reference, settled_at = now(), updated_at = now()
         FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::text[]) AS reference) x WHERE ch.id = x.id`,
      [v.charge, v.reference],
    );
    await trx.raw(
      `INSERT INTO charge_allocations (organization_id, environment, charge_id, debt_account_id, amount)
       SELECT ?, 'sandbox', unnest(?::uuid[]), unnest(?::uuid[]), unnest(?::bigint[])`,
      [org, v.charge, v.account, v.amount],
    );
    await trx.raw(
      `INSERT INTO transactions (organization_id, environment, charge_id, debt_account_id, kind, status, amount, gateway_reference)
       SELECT ?, 'sandbox', unnest(?::uuid[]), unnest(?::uuid[]), 'charge', 'succeeded', unnest(?::bigint[]), unnest(?::text[])`,
      [org, v.charge, v.account, v.amount, v.reference],
    );
    await trx.raw(
      `UPDATE debt_accounts a SET current_balance = current_balance - x.amount, updated_at = now()
         FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::bigint[]) AS amount) x WHERE a.id = x.id`,
      [v.account, v.amount],
    );
    await trx.raw(
      `UPDATE payment_plan_charge_attempts t SET outcome = 'paid'
         FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::int[]) AS attempt) x WHERE t.payment_plan_charge_id = x.id AND t.attempt = x.attempt`,
      [v.instalment, v.attempt],
    );
    await trx.raw(
      `UPDATE payment_plan_charges i SET status = 'succeeded', attempts = x.attempt, successfully_charged_at = now(), error = NULL, error_code = NULL, updated_at = now()
         FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::int[]) AS attempt) x WHERE i.id = x.id`,
      [v.instalment, v.attempt],
    );
    // The plans are completed after their last instalment (their accounts paid off).
    await trx.raw(
      `UPDATE payment_plans p SET status = 'completed', ended_at = now(), consecutive_failures = 0, updated_at = now()
        WHERE p.id = ANY(?::uuid[]) AND NOT EXISTS (SELECT 1 FROM payment_plan_charges WHERE payment_plan_id = p.id AND status = 'pending')`,
      [v.plan],
    );
    // The three events of each, in the order of `payloads`' kind, their payloads built from the
    // rows as they now are, stored as their JSON text's bytes (the event log's body column,
    // uncompressed).
    const events = EVENTS[payloads];
    await trx.raw(
      `INSERT INTO webhook_events (organization_id, environment, name, object_id, body, occurred_at)
       SELECT ?, 'sandbox', e.name, e.object_id, convert_to(e.payload::text, 'UTF8'), now() FROM (${events.select}) e ORDER BY ${events.order}`,
      [org, v.charge, v.account, v[events.planEventOf]],
    );
  });
  return answers.map(() => undefined);
}

/**
 * Every due instalment of `org`, `inFlight` at once, a plan's one after another (the job's
 * lanes), the next starting as soon as one ends, started and recorded in batches as the job's
 * are; answers how many. The due rows are read in one query up front (less reading than the job
 * does: a ceiling).
 */
export async function bareInstalments(db: Knex, org: string, inFlight: number, payloads: BarePayloads): Promise<number> {
  if (payloads === 'documented') await createBarePayloadFunctions(db);
  const starts = batcher<string, Reserved | undefined>((ids) => reserveBatch(db, org, ids));
  const records = batcher<{ reserved: Reserved; reference: string }, void>((answers) => recordBatch(db, org, payloads, answers));
  const instalment = async (id: string) => {
    const reserved = await starts.add(id);
    if (!reserved) return;
    const reference = await gatewayCharge(db, org, reserved);
    await records.add({ reserved, reference });
  };
  const due: Due[] = (
    await db.raw(`SELECT id, payment_plan_id, seq FROM payment_plan_charges WHERE organization_id = ? AND status = 'pending' AND due_at <= now() ORDER BY due_at, seq`, [org])
  ).rows;
  const lanes = [...groupBy(due, (row) => row.payment_plan_id).values()];
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, lanes.length) }, async () => {
      for (let lane = lanes.shift(); lane; lane = lanes.shift()) {
        for (const row of lane) {
          await instalment(row.id);
          done += 1;
        }
      }
    }),
  );
  return done;
}
