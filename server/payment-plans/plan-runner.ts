/**
 * Carrying out due instalments. Due work is found by a query over due rows (never a timer per
 * row); each instalment starts in its own transaction that locks its account, its plan and
 * itself, checks again that it is still due, records the attempt as a row keyed (instalment,
 * attempt number) and reserves the charge: two processes racing over one instalment cannot
 * both record attempt N, and a process killed before that commit rolls it all back, so the
 * instalment is simply due again. The instalment is then in flight (no `due_at`): the gateway
 * is asked after the commit, and the answer, recorded by the payments (or by their recovery
 * after a crash), finishes the attempt through `charge.finished` (instalment-outcome.ts).
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Environment, Tenant } from '../kernel/tenant';
import type { DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { PAYMENT_PLANS, PLAN_CHARGE_ATTEMPTS, PLAN_CHARGES, PLAN_COLUMNS, planRepo, type InstalmentRow, type PlanRow, type PlanValues } from './plan-repo';
import { scheduleFrom } from './plan-service';
import { termsOf } from '../payment-terms/payment-terms';
import { announce } from '../events/listeners';
import { chargeDate } from './schedule';
import { afterDecline, afterPayment, endPlan, type InstalmentCharge } from './plan-after';

export type { InstalmentCharge };
import { moneyWrites } from '../payments/write-slots';
import { familyKey } from '../payments/family-locks';

/** One instalment's charge to reserve: of `amount`, to its plan's method, at `now` (its tenant's time). */
export interface ChargeRequest {
  tenant: Tenant;
  plan: PlanRow;
  instalment: InstalmentRow;
  amount: number;
  attempt: number;
  now: Date;
}

/**
 * The payments port as the plans see it: reserve the charges of a batch of instalments (one or
 * many, of any tenants), on `trx`, set-based; for each, `finish` (called after the commit) asks
 * the gateway and records its answer. One that could not be made: the failed attempt's outcome
 * instead. Answers in the order of `requests`.
 */
export type InstalmentCharger = (trx: Knex.Transaction, requests: ChargeRequest[]) => Promise<(InstalmentCharge | { chargeId: string; finish: () => Promise<unknown> })[]>;

export type RunnerDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

export interface DueRef {
  id: string;
  organization_id: string;
  environment: Environment;
  due_at: Date;
  /** Items of one lane (a plan's instalments, an account's scheduled charges) run one after another, in due order. */
  lane?: string;
}

const BATCH = 500;

/**
 * Pending instalments of active plans due at `realNow` on their tenant's clock (production:
 * real time; a sandbox: its clock): each tenant's earliest first, the tenants taking turns (so
 * one tenant's backlog does not fill the batch).
 */
export async function dueInstalments(db: Knex, realNow: Date, limit = BATCH): Promise<DueRef[]> {
  const { rows } = await db.raw<{ rows: DueRef[] }>(
    `SELECT id, organization_id, environment, due_at, lane FROM (
       SELECT i.id, i.organization_id, i.environment, i.due_at, i.payment_plan_id AS lane, i.seq,
              row_number() OVER (PARTITION BY i.organization_id, i.environment ORDER BY i.due_at, i.seq) AS turn
         FROM ${PLAN_CHARGES} i
         LEFT JOIN sandbox_clocks c ON i.environment = 'sandbox' AND c.organization_id = i.organization_id
        WHERE i.status = 'pending' AND i.due_at IS NOT NULL
          AND i.due_at <= ?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
     ) due
      ORDER BY turn, due_at, seq
      LIMIT ?`,
    [realNow, limit],
  );
  return rows;
}

/** One tenant's pending instalments due at or before `upTo`, earliest first (the sandbox clock's advance). */
export async function dueInstalmentsOf(db: Knex, tenant: Tenant, upTo: Date, limit = BATCH): Promise<DueRef[]> {
  return db(PLAN_CHARGES)
    .where({ organization_id: tenant.organizationId, environment: tenant.environment, status: 'pending' })
    .where('due_at', '<=', upTo)
    .orderBy([{ column: 'due_at' }, { column: 'seq' }])
    .limit(limit)
    .select('id', 'organization_id', 'environment', 'due_at');
}

/** An instalment the flow found due, with its tenant and the time (its tenant's) it is carried out at. */
export interface DueInstalment {
  ref: DueRef;
  tenant: Tenant;
  now: Date;
}

/** What starting an instalment answered: whether it did anything, or its charge to finish (ask the gateway, record the answer) after the commit. */
export type Started = boolean | { finish: () => Promise<unknown> };

/** Locks the families of many accounts at once, the way every writer of balances does (payments/family-locks.ts); answers the accounts found, by id. */
export type LockAccounts = (trx: Knex.Transaction, wanted: { tenant: Tenant; accountId: string }[]) => Promise<Map<string, DebtAccountRow>>;

/**
 * Carries out the instalment `ref` at `now` (its tenant's time) when it is still due; answers
 * whether it did anything (a batch of one: `startInstalments`).
 */
export async function runInstalment(
  deps: RunnerDeps,
  charge: InstalmentCharger,
  lockAccounts: LockAccounts,
  ref: DueRef,
  tenantOf: (ref: DueRef) => Tenant,
  now: Date,
): Promise<boolean> {
  const [started] = await startInstalments(deps, charge, lockAccounts, [{ ref, tenant: tenantOf(ref), now }]);
  if (typeof started === 'boolean') return started;
  await started!.finish();
  return true;
}

/**
 * Starts the instalments `items` (of any plans and tenants, one per plan) in ONE short
 * transaction: their account families locked in one fixed order (family-locks.ts: two batches,
 * or a batch and the API, queue instead of deadlocking), then their plans,
 * then the instalments (each by id), as the API's plan changes lock (account, plan, instalment);
 * each checked again and started; the attempts of those charged inserted in one statement and
 * their instalments put in flight in another. Answers each item's outcome, in order; the charges
 * are finished by the caller after the commit.
 */
export async function startInstalments(deps: RunnerDeps, charge: InstalmentCharger, lockAccounts: LockAccounts, items: DueInstalment[]): Promise<Started[]> {
  return moneyWrites(deps.db, () =>
    deps.db.transaction(async (trx): Promise<Started[]> => {
      const ids = items.map((item) => item.ref.id);
      const { rows: peeks } = await trx.raw<{ rows: { id: string; payment_plan_id: string; debt_account_id: string }[] }>(
        `SELECT i.id, i.payment_plan_id, p.debt_account_id FROM ${PLAN_CHARGES} i JOIN ${PAYMENT_PLANS} p ON p.id = i.payment_plan_id WHERE i.id = ANY(?::uuid[])`,
        [ids],
      );
      const peekOf = new Map(peeks.map((peek) => [peek.id, peek]));
      const tenantOfItem = new Map(items.map((item) => [item.ref.id, item.tenant]));
      // Account families first, in one order.
      const accounts = await lockAccounts(
        trx,
        peeks.map((peek) => ({ tenant: tenantOfItem.get(peek.id)!, accountId: peek.debt_account_id })),
      );
      // Then the plans, then the instalments, each locked in id order (ORDER BY: rows are locked as they come out sorted).
      const planIds = [...new Set(peeks.map((peek) => peek.payment_plan_id))];
      const plans = new Map<string, PlanRow & TenantOf>(
        ((await trx(PAYMENT_PLANS).whereIn('id', planIds).orderBy('id').forUpdate().select([...PLAN_COLUMNS, `${PAYMENT_PLANS}.organization_id`, `${PAYMENT_PLANS}.environment`])) as (PlanRow & TenantOf)[]).map(
          (plan) => [plan.id, plan],
        ),
      );
      const instalments = new Map<string, InstalmentRow & TenantOf>(
        ((await trx(PLAN_CHARGES).whereIn('id', ids).orderBy('id').forUpdate().select('*')) as (InstalmentRow & TenantOf)[]).map((row) => [row.id, row]),
      );

      const inFlight: { item: DueInstalment; instalment: InstalmentRow; attempt: number; chargeId: string }[] = [];
      const started: Started[] = [];
      // The charges of those to charge, reserved together, a round at a time: a second
      // instalment of one account family (a plan on a parent and one on a child moved under it)
      // starts after the round before it is reserved, on its family read again, so it counts
      // that reservation (its amount as one at a time would have made it).
      let round: { index: number; item: DueInstalment; request: ChargeRequest }[] = [];
      const inRound = new Set<string>();
      const charging = new Set<string>();
      const chargeRound = async () => {
        const charged = round.length > 0 ? await charge(trx, round.map((each) => each.request)) : [];
        for (const [at, { index, item, request }] of round.entries()) {
          const outcome = charged[at]!;
          if ('finish' in outcome) {
            inFlight.push({ item, instalment: request.instalment, attempt: request.attempt, chargeId: outcome.chargeId });
            started[index] = { finish: outcome.finish };
          } else {
            await notCharged(deps, trx, request, outcome);
            started[index] = true;
          }
        }
        round = [];
        inRound.clear();
      };
      for (const item of items) {
        const peek = peekOf.get(item.ref.id);
        const plan = peek && plans.get(peek.payment_plan_id);
        const instalment = instalments.get(item.ref.id);
        let account = peek && accounts.get(peek.debt_account_id);
        if (!account || !plan || !instalment || !ofTenant(plan, item.tenant) || !ofTenant(instalment, item.tenant)) {
          started.push(false);
          continue;
        }
        const family = familyKey(item.tenant, account.parent_id ?? account.id);
        if (charging.has(family)) {
          if (inRound.has(family)) await chargeRound();
          account = (await lockAccounts(trx, [{ tenant: item.tenant, accountId: account.id }])).get(account.id)!;
        }
        const outcome = await startOne(deps, trx, item, account, plan, instalment);
        if (typeof outcome === 'object') {
          round.push({ index: started.length, item, request: { tenant: item.tenant, plan, instalment, now: item.now, ...outcome } });
          inRound.add(family);
          charging.add(family);
        }
        started.push(outcome === true);
      }
      await chargeRound();
      if (inFlight.length > 0) {
        // The key of exactly once: a second process recording one of these attempts fails here (and rolls the batch back).
        await trx(PLAN_CHARGE_ATTEMPTS).insert(
          inFlight.map(({ item, instalment, attempt, chargeId }) => ({
            payment_plan_charge_id: instalment.id,
            attempt,
            organization_id: item.tenant.organizationId,
            environment: item.tenant.environment,
            outcome: 'started',
            charge_id: chargeId,
          })),
        );
        // In flight: not due again while their charges are being made.
        await trx.raw(
          `UPDATE ${PLAN_CHARGES} i SET due_at = NULL, charge_id = v.charge_id, updated_at = now()
             FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::uuid[]) AS charge_id) v WHERE i.id = ANY(?::uuid[]) AND i.id = v.id`,
          [inFlight.map((each) => each.instalment.id), inFlight.map((each) => each.chargeId), inFlight.map((each) => each.instalment.id)],
        );
      }
      return started;
    }),
  );
}

interface TenantOf {
  organization_id: string;
  environment: Environment;
}

const ofTenant = (row: TenantOf, tenant: Tenant) => row.organization_id === tenant.organizationId && row.environment === tenant.environment;

/**
 * One locked instalment, checked again: the attempt and amount to charge (the caller reserves
 * the batch's charges together), or what happens instead (skipped for a dispute, the plan
 * ended; false: nothing to do).
 */
async function startOne(
  deps: RunnerDeps,
  trx: Knex.Transaction,
  { tenant, now }: DueInstalment,
  account: DebtAccountRow,
  plan: PlanRow,
  instalment: InstalmentRow,
): Promise<boolean | { attempt: number; amount: number }> {
  if (instalment.status !== 'pending' || !instalment.due_at || instalment.due_at.getTime() > now.getTime() || plan.status !== 'active') return false;
  const plans = planRepo(trx, tenant);
  let changes: PlanValues = {};
  const { refusal, maximum } = termsOf(account);
  // Other payments being made take the whole balance: due again once they are done.
  if (refusal?.reason === 'reserved') return false;
  if (refusal?.reason === 'disputed') {
    // Held by an open dispute: this instalment is not collected; the plan goes on after it.
    changes = await skipInstalment(trx, tenant, plan, account, instalment, now);
  } else if (refusal) {
    // Paid off in the meantime (a one-time charge): the plan is done; closed or otherwise
    // out of collection: the plan is canceled, nothing is charged.
    changes = await endPlan(trx, tenant, plan, refusal.reason === 'paid_off' ? 'completed' : 'canceled', now);
  } else {
    return { attempt: instalment.attempts + 1, amount: Math.min(Number(instalment.amount), maximum) };
  }
  await plans.update(plan.id, changes);
  await deps.events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [plan.debt_account_id] }]);
  return true;
}

/** No charge could be made for the instalment: the attempt is recorded failed at once (its key, as a charged one's), and the plan goes on after it. */
async function notCharged(deps: RunnerDeps, trx: Knex.Transaction, { tenant, plan, instalment, attempt, amount, now }: ChargeRequest, outcome: InstalmentCharge): Promise<void> {
  await trx(PLAN_CHARGE_ATTEMPTS).insert({
    payment_plan_charge_id: instalment.id,
    attempt,
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    outcome: outcome.paid ? 'paid' : 'failed',
    charge_id: outcome.chargeId,
  });
  if (outcome.paid && outcome.chargeId) await announce(trx, deps.events, tenant, 'instalment.paid', { accountIds: [plan.debt_account_id], chargeId: outcome.chargeId, now });
  const changes = outcome.paid ? await afterPayment(trx, tenant, plan, instalment, amount, attempt, outcome, now) : await afterDecline(trx, tenant, plan, instalment, attempt, outcome, now);
  if (changes.status === 'defaulted') await announce(trx, deps.events, tenant, 'plan.defaulted', { planId: plan.id, accountId: plan.debt_account_id, now });
  await planRepo(trx, tenant).update(plan.id, changes);
  await deps.events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [plan.debt_account_id] }]);
}

/** Marks a due instalment `skipped`; when none is left pending, the plan goes on one period later. */
async function skipInstalment(trx: Knex.Transaction, tenant: Tenant, plan: PlanRow, account: DebtAccountRow, instalment: InstalmentRow, now: Date): Promise<PlanValues> {
  await trx(PLAN_CHARGES).where({ id: instalment.id }).update({ status: 'skipped', due_at: null, updated_at: trx.fn.now() });
  const pending = await trx(PLAN_CHARGES).where({ payment_plan_id: plan.id, status: 'pending' }).first('id');
  if (!pending) return scheduleFrom(trx, tenant, plan, account, chargeDate(plan.frequency!, instalment.charge_date, 1), now);
  return {};
}
