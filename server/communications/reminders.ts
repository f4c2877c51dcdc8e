/**
 * Payment reminders: `reminder_days_before` days before each pending plan instalment and
 * scheduled charge, at the item's own due hour on that earlier day, one e-mail with the amount,
 * the date, the method's last four and a link to change the method or the date. Found by a
 * query over due items (never a timer per item); exactly once per item because the log's row
 * is keyed by it (`payment_reminder:<item>:<id>`, unique per tenant). Never for an account
 * paid off or no longer active, nor for a plan no longer active.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { openSessionIn } from '../customer-sessions/customer-session-service';
import { SETTING_KEYS } from '../settings/settings-keys';
import { COMMUNICATIONS } from './communication-repo';
import { sendToDebtor } from './outgoing';

export type ReminderDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets' | 'clock'>;

type Item = 'instalment' | 'scheduled_charge';

interface ReminderRow {
  item: Item;
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  /** When the reminder is due: the item's due time, `days` earlier. */
  due_at: Date;
  charge_due_at: Date;
  days: number;
  debt_account_id: string;
  customer_id: string;
  amount: string;
  card_last4: string | null;
  account_number_masked: string | null;
}

const DEFAULT_DAYS = SETTING_KEYS.reminder_days_before.default({ notification_email: null, organization_name: '' });

const keyOf = (item: Item, id: string) => `payment_reminder:${item}:${id}`;

/** The document's maximum of `reminder_days_before`: no item further away than this is looked at. */
const MAX_DAYS_BEFORE = 30;

/**
 * Every item that may be reminded, with its reminder time; `now` is SQL for the tenant's time
 * of each row. Its first two bindings bound the items' due times (`after`, and `before` plus
 * the reminder window and the furthest sandbox clock), so the scheduler's pass reads the due
 * index's range instead of every pending item.
 */
function remindable(now: string): string {
  const days = `coalesce((st.settings->>'reminder_days_before')::int, ${Number(DEFAULT_DAYS)})`;
  const common = (alias: string, accountId: string) => `
       JOIN debt_accounts a ON a.id = ${accountId} AND a.status = 'active' AND a.current_balance > 0
       LEFT JOIN organization_settings st ON st.organization_id = ${alias}.organization_id AND st.environment = ${alias}.environment
       LEFT JOIN sandbox_clocks c ON ${alias}.environment = 'sandbox' AND c.organization_id = ${alias}.organization_id
       LEFT JOIN payment_methods pm ON pm.id = ${alias}.payment_method_id`;
  return `
    WITH w AS (SELECT ?::timestamptz AS after,
                      ?::timestamptz + (SELECT coalesce(max(offset_ms), 0) FROM sandbox_clocks) * interval '1 millisecond' + interval '${MAX_DAYS_BEFORE} days' AS before)
    SELECT * FROM (
      SELECT 'instalment' AS item, i.id, i.organization_id, i.environment, i.due_at AS charge_due_at, ${days} AS days,
             i.due_at - ${days} * interval '1 day' AS due_at, p.debt_account_id, a.customer_id, i.amount,
             pm.card_last4, pm.account_number_masked, ${now} AS tenant_now
        FROM payment_plan_charges i
        JOIN payment_plans p ON p.id = i.payment_plan_id AND p.status = 'active'
        ${common('p', 'p.debt_account_id')}
       WHERE i.status = 'pending' AND i.attempts = 0 AND i.due_at > (SELECT after FROM w) AND i.due_at <= (SELECT before FROM w)
      UNION ALL
      SELECT 'scheduled_charge', ch.id, ch.organization_id, ch.environment, ch.due_at, ${days},
             ch.due_at - ${days} * interval '1 day', ch.debt_account_id, a.customer_id, ch.amount,
             pm.card_last4, pm.account_number_masked, ${now}
        FROM charges ch
        ${common('ch', 'ch.debt_account_id')}
       WHERE ch.status = 'scheduled' AND ch.due_at > (SELECT after FROM w) AND ch.due_at <= (SELECT before FROM w)
    ) r
    WHERE r.days > 0 AND r.charge_due_at > r.due_at
      AND NOT EXISTS (SELECT 1 FROM ${COMMUNICATIONS} m WHERE m.organization_id = r.organization_id AND m.environment = r.environment
                        AND m.dedupe_key = 'payment_reminder:' || r.item || ':' || r.id)`;
}

const TENANT_NOW = `?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'`;

/** Reminders due at `realNow` on their tenant's clock, earliest first. Ids are `<item>:<uuid>`. */
export async function dueReminders(db: Knex, realNow: Date, limit = 200): Promise<{ id: string; organization_id: string; environment: Tenant['environment']; due_at: Date }[]> {
  const { rows } = await db.raw<{ rows: ReminderRow[] }>(
    `${remindable(TENANT_NOW)} AND r.due_at <= r.tenant_now AND r.charge_due_at > r.tenant_now ORDER BY r.due_at, r.id LIMIT ?`,
    // A sandbox clock is never behind real time: an item due before real time is due on every clock.
    [realNow, realNow, realNow, realNow, limit],
  );
  return rows.map((row) => ({ id: `${row.item}:${row.id}`, organization_id: row.organization_id, environment: row.environment, due_at: row.due_at }));
}

/** One tenant's reminders due at or before `upTo` (the sandbox clock's advance). */
export async function dueRemindersOf(db: Knex, tenant: Tenant, upTo: Date, limit = 1): Promise<{ id: string; organization_id: string; environment: Tenant['environment']; due_at: Date }[]> {
  const { rows } = await db.raw<{ rows: ReminderRow[] }>(
    `${remindable('?::timestamptz')} AND r.organization_id = ? AND r.environment = ? AND r.due_at <= ? ORDER BY r.due_at, r.id LIMIT ?`,
    ['-infinity', upTo, upTo, upTo, tenant.organizationId, tenant.environment, upTo, limit],
  );
  return rows.map((row) => ({ id: `${row.item}:${row.id}`, organization_id: row.organization_id, environment: row.environment, due_at: row.due_at }));
}

const dollars = (cents: string) => `$${(Number(cents) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const dateOf = (time: Date) => time.toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });

function methodOf(row: ReminderRow): string {
  if (row.card_last4) return `your card ending ${row.card_last4}`;
  if (row.account_number_masked) return `your bank account ending ${row.account_number_masked.slice(-4)}`;
  return 'no payment method on file (please add one)';
}

/**
 * Writes the reminder of `ref` (`<item>:<uuid>`) at `now` (its tenant's time) when it is
 * still due; answers whether it is recorded (by this call or another process's).
 */
export async function runReminder(deps: ReminderDeps, tenant: Tenant, ref: string, now: Date): Promise<boolean> {
  const [item, id] = ref.split(':') as [Item, string];
  return deps.db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: ReminderRow[] }>(
      `${remindable('?::timestamptz')} AND r.item = ? AND r.id = ? AND r.organization_id = ? AND r.environment = ? AND r.due_at <= r.tenant_now AND r.charge_due_at > r.tenant_now`,
      [now, now, now, now, item, id, tenant.organizationId, tenant.environment],
    );
    const row = rows[0];
    if (!row) {
      const done = await trx(COMMUNICATIONS).where({ organization_id: tenant.organizationId, environment: tenant.environment, dedupe_key: keyOf(item, id) }).first('id');
      return Boolean(done);
    }
    const amount = dollars(row.amount);
    const date = dateOf(row.charge_due_at);
    await sendToDebtor(deps, trx, tenant, {
      customerId: row.customer_id,
      debtAccountId: row.debt_account_id,
      kind: 'payment_reminder',
      // The subject shows in an inbox list to whoever glances at it: the amount is in the text only.
      subject: `Payment reminder for ${date}`,
      dedupeKey: keyOf(item, id),
      now,
      body: async () => {
        const customer = (await customerRepo(trx, tenant).find(row.customer_id))!;
        const account = (await debtAccountRepo(trx, tenant).find(row.debt_account_id))!;
        const link = await openSessionIn(trx, deps, tenant, {
          customer,
          account,
          // Until the day after the due date.
          validUntilHours: (row.days + 1) * 24,
          tags: [
            { name: 'utm_medium', value: 'email' },
            { name: 'utm_campaign', value: 'payment_reminder' },
          ],
        });
        return [
          `Hello ${customer.name},`,
          '',
          `This is a reminder: your payment of ${amount} is due on ${date}, from ${methodOf(row)}.`,
          `To change the payment method or the date, open: ${link}`,
        ].join('\n');
      },
    });
    return true;
  });
}
