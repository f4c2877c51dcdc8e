/**
 * The bare-SQL baseline of bench:scheduler: the rows the due-work job makes for a plan's
 * instalment, made by hand-written SQL with no service code, in the same number of
 * transactions, at the same number in flight and on a pool of the same size — the ceiling this
 * database allows. Per instalment, as the real path does:
 * 1. reserve: the account, plan and instalment locked; the attempt row; the charge `processing`;
 *    the instalment in flight (no `due_at`);
 * 2. the gateway's own transaction: its request keyed by the charge, its payment, its answer;
 * 3. record: the account and charge locked; the charge succeeded; its allocation and transaction;
 *    the balance; the events (charge.succeeded, debt-account.update, payment-plan.update) in the
 *    event log with payloads read from the rows; the attempt paid; the instalment succeeded;
 *    the plan completed after its last instalment.
 * A plan's instalments run one after another, in order, as the job's lanes do.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { groupBy } from '../server/collections';

interface Due {
  id: string;
  payment_plan_id: string;
  seq: number;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url')}`;

async function instalment(db: Knex, org: string, id: string): Promise<void> {
  const reserved = await db.transaction(async (trx) => {
    const { rows } = await trx.raw(
      `SELECT i.id, i.amount, i.attempts, p.id AS plan_id, a.id AS account_id, a.customer_id, m.id AS method_id, m.gateway_token,
              m.card_holder, m.card_last4, m.card_exp_month, m.card_exp_year, m.card_brand, m.card_zip, c.email
         FROM payment_plan_charges i
         JOIN payment_plans p ON p.id = i.payment_plan_id
         JOIN debt_accounts a ON a.id = p.debt_account_id
         JOIN payment_methods m ON m.id = p.payment_method_id
         JOIN customers c ON c.id = a.customer_id
        WHERE i.id = ? AND i.status = 'pending'
          FOR UPDATE OF a, p, i`,
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const attempt = row.attempts + 1;
    const [charge] = (
      await trx.raw(
        `INSERT INTO charges (organization_id, environment, reference_number, debt_account_id, customer_id, payment_method_id, payment_method_type, card, gateway, amount, email, source, payment_plan_id, payment_plan_charge_id, status)
         VALUES (?, 'sandbox', ?, ?, ?, ?, 'card', ?::jsonb, 'sandbox', ?, ?, 'payment_plan', ?, ?, 'processing') RETURNING id`,
        [
          org,
          `CH-${randomBytes(5).toString('hex').toUpperCase()}`,
          row.account_id,
          row.customer_id,
          row.method_id,
          JSON.stringify({ card_holder: row.card_holder, card_number: row.card_last4, expiration_month: row.card_exp_month, expiration_year: row.card_exp_year, card_type: row.card_brand, card_zip: row.card_zip }),
          row.amount,
          row.email,
          row.plan_id,
          row.id,
        ],
      )
    ).rows as { id: string }[];
    await trx.raw(
      `INSERT INTO payment_plan_charge_attempts (payment_plan_charge_id, attempt, organization_id, environment, outcome, charge_id) VALUES (?, ?, ?, 'sandbox', 'started', ?)`,
      [row.id, attempt, org, charge!.id],
    );
    await trx.raw(`UPDATE payment_plan_charges SET due_at = NULL, charge_id = ?, updated_at = now() WHERE id = ?`, [charge!.id, row.id]);
    return { ...row, attempt, chargeId: charge!.id as string };
  });
  if (!reserved) return;

  // The gateway's own short transaction.
  const reference = newId('pay');
  await db.transaction(async (trx) => {
    await trx.raw(`INSERT INTO sandbox_requests (organization_id, environment, idempotency_key, kind) VALUES (?, 'sandbox', ?, 'charge')`, [org, reserved.chargeId]);
    await trx.raw(`SELECT token, kind, number_sealed FROM sandbox_vault WHERE organization_id = ? AND environment = 'sandbox' AND token = ?`, [org, reserved.gateway_token]);
    await trx.raw(`INSERT INTO sandbox_payments (organization_id, environment, reference, token, amount, status) VALUES (?, 'sandbox', ?, ?, ?, 'succeeded')`, [
      org,
      reference,
      reserved.gateway_token,
      reserved.amount,
    ]);
    await trx.raw(`UPDATE sandbox_requests SET answer = ?::jsonb WHERE organization_id = ? AND environment = 'sandbox' AND idempotency_key = ?`, [
      JSON.stringify({ status: 'succeeded', reference }),
      org,
      reserved.chargeId,
    ]);
  });

  await db.transaction(async (trx) => {
    await trx.raw(`SELECT id FROM debt_accounts WHERE id = ? FOR UPDATE`, [reserved.account_id]);
    await trx.raw(`SELECT id FROM charges WHERE id = ? FOR UPDATE`, [reserved.chargeId]);
    await trx.raw(`UPDATE charges SET status = 'succeeded', gateway_reference = ?, settled_at = now(), updated_at = now() WHERE id = ?`, [reference, reserved.chargeId]);
    await trx.raw(`INSERT INTO charge_allocations (organization_id, environment, charge_id, debt_account_id, amount) VALUES (?, 'sandbox', ?, ?, ?)`, [
      org,
      reserved.chargeId,
      reserved.account_id,
      reserved.amount,
    ]);
    await trx.raw(
      `INSERT INTO transactions (organization_id, environment, charge_id, debt_account_id, kind, status, amount, gateway_reference) VALUES (?, 'sandbox', ?, ?, 'charge', 'succeeded', ?, ?)`,
      [org, reserved.chargeId, reserved.account_id, reserved.amount, reference],
    );
    await trx.raw(`UPDATE debt_accounts SET current_balance = current_balance - ?, updated_at = now() WHERE id = ?`, [reserved.amount, reserved.account_id]);
    await trx.raw(`UPDATE payment_plan_charge_attempts SET outcome = 'paid' WHERE payment_plan_charge_id = ? AND attempt = ?`, [reserved.id, reserved.attempt]);
    await trx.raw(
      `UPDATE payment_plan_charges SET status = 'succeeded', attempts = ?, successfully_charged_at = now(), error = NULL, error_code = NULL, updated_at = now() WHERE id = ?`,
      [reserved.attempt, reserved.id],
    );
    // The plan is completed after its last instalment (its account paid off).
    await trx.raw(
      `UPDATE payment_plans SET status = 'completed', ended_at = now(), consecutive_failures = 0, updated_at = now()
        WHERE id = ? AND NOT EXISTS (SELECT 1 FROM payment_plan_charges WHERE payment_plan_id = ? AND status = 'pending')`,
      [reserved.plan_id, reserved.plan_id],
    );
    // The three events, their payloads read from the rows as they now are (stored as their JSON
    // text's bytes: the event log's body column, without the service's compression).
    await trx.raw(
      `INSERT INTO webhook_events (organization_id, environment, name, object_id, body, occurred_at)
       SELECT ?, 'sandbox', e.name, e.object_id, convert_to(e.payload::text, 'UTF8'), now() FROM (
         SELECT 'charge.succeeded' AS name, ch.id AS object_id, to_jsonb(ch) || jsonb_build_object('transactions', (SELECT jsonb_agg(to_jsonb(t)) FROM transactions t WHERE t.charge_id = ch.id)) AS payload
           FROM charges ch WHERE ch.id = ?
         UNION ALL
         SELECT 'debt-account.update', a.id, to_jsonb(a) FROM debt_accounts a WHERE a.id = ?
         UNION ALL
         SELECT 'payment-plan.update', p.id, to_jsonb(p) || jsonb_build_object('charges', (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.seq) FROM payment_plan_charges i WHERE i.payment_plan_id = p.id))
           FROM payment_plans p WHERE p.id = ?
       ) e`,
      [org, reserved.chargeId, reserved.account_id, reserved.plan_id],
    );
  });
}

/**
 * Every due instalment of `org`, `inFlight` at once, a plan's one after another (the job's
 * lanes), the next starting as soon as one ends; answers how many. The due rows are read in one
 * query up front (less reading than the job does: a ceiling).
 */
export async function bareInstalments(db: Knex, org: string, inFlight: number): Promise<number> {
  const due: Due[] = (
    await db.raw(`SELECT id, payment_plan_id, seq FROM payment_plan_charges WHERE organization_id = ? AND status = 'pending' AND due_at <= now() ORDER BY due_at, seq`, [org])
  ).rows;
  const lanes = [...groupBy(due, (row) => row.payment_plan_id).values()];
  let done = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, lanes.length) }, async () => {
      for (let lane = lanes.shift(); lane; lane = lanes.shift()) {
        for (const row of lane) {
          await instalment(db, org, row.id);
          done += 1;
        }
      }
    }),
  );
  return done;
}
