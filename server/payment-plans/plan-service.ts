/**
 * Payment plans through the API: create (enrolled at once when a payment method is given),
 * list, read with the schedule, update (the schedule recomputed from the next unpaid
 * instalment) and cancel. Charging the instalments is the scheduler's (plan-runner.ts).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { isUniqueViolation } from '../db/tenant';
import { dueAt, todayUtc } from '../kernel/dates';
import { debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { lockAccount } from '../payments/balances';
import { nowFor } from '../kernel/clock';
import { planToApi } from './plan-mapper';
import { OPEN_STATUSES, PAYMENT_PLANS, PLAN_COLUMNS, planRepo, type PlanRow, type PlanValues } from './plan-repo';
import { checkPaymentMethod } from './plan-rules';
import type { FieldErrors } from '../kernel/errors';
import { amountDue, termsOf, type Channel } from '../payment-terms/payment-terms';
import { planAmountErrors, planErrors, planStartErrors, throwIfAny } from '../payment-terms/payment-intent';
import { schedule, type Frequency } from './schedule';

type Schemas = components['schemas'];
type Plan = Schemas['PaymentPlanDetail'];

export type PlanDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

const notFound = () => ApiError.notFound('Payment plan');

async function load(db: Knex, tenant: Tenant, rows: PlanRow[]): Promise<Plan[]> {
  const instalments = await planRepo(db, tenant).instalments(rows.map((row) => row.id));
  return rows.map((row) => planToApi(row, instalments.filter((i) => i.payment_plan_id === row.id)));
}

/**
 * Makes the schedule of an active plan: instalments covering what the account owes (its
 * current balance, or what is left of an accepted settlement) from `start`. A plan with nothing
 * left to pay is completed instead.
 */
export async function scheduleFrom(trx: Knex, tenant: Tenant, plan: PlanRow, account: DebtAccountRow, start: string, now: Date): Promise<PlanValues> {
  const total = amountDue(account);
  if (total <= 0) return { status: 'completed', ended_at: now };
  const plans = planRepo(trx, tenant);
  const first = await plans.nextSeq(plan.id);
  const instalments = schedule({ frequency: plan.frequency!, start, amount: Number(plan.amount), total });
  await plans.insertInstalments(
    plan.id,
    instalments.map((i) => ({ seq: first + i.index, charge_date: i.date, amount: i.amount, due_at: dueAt(i.date) })),
  );
  return {};
}

/**
 * The account locked with its whole family (its parent or children), in the one family lock
 * order of every writer of balances (payments/balances.ts `lockAccount`), so a plan change
 * queues behind a charge on the family instead of locking a child alone; with the dispute
 * hold's fact for the payment terms (a plan pays a parent). What charges being made reserve is
 * not counted here, as before: a plan covers what the account owes.
 */
async function lockedAccount(trx: Knex.Transaction, tenant: Tenant, key: string): Promise<DebtAccountRow | undefined> {
  const family = await lockAccount(trx, tenant, key);
  if (!family) return undefined;
  const { reserved_amount: _reserved, ...account } = family.account;
  return account;
}

/** Who sets up a plan (whose windows apply), and what must commit with it. */
export interface PlanContext {
  channel?: Channel;
  /** Runs first in the plan's transaction, before the account is read: what must commit with the plan and decides it (a settlement's acceptance sets the sum the plan pays). */
  before?: (trx: Knex.Transaction) => Promise<void>;
  within?: (trx: Knex.Transaction) => Promise<void>;
}

async function create({ db, events, clock }: PlanDeps, tenant: Tenant, body: Schemas['PaymentPlanEnrollment'], context: PlanContext = {}): Promise<Plan> {
  const now = nowFor(clock, tenant);
  const at = { channel: context.channel ?? 'api', today: todayUtc(now) } as const;
  try {
    return await db.transaction(async (trx) => {
      await context.before?.(trx);
      const account = await lockedAccount(trx, tenant, body.debt_account_id);
      const errors = planErrors(account, account && termsOf(account), body, at);
      if (account && body.payment_method_id) await checkPaymentMethod(trx, tenant, errors, body.payment_method_id, account.customer_id, now);
      throwIfAny(errors);
      const plans = planRepo(trx, tenant);
      if (await plans.openOf(account!.id)) throw openPlanConflict();
      const enrolled = body.payment_method_id !== undefined;
      let plan = await plans.insert(account!.id, {
        frequency: body.frequency,
        start_date: body.start_date,
        amount: body.amount,
        status: enrolled ? 'active' : 'pending_enrollment',
        payment_method_id: body.payment_method_id ?? null,
        ...(enrolled ? { enrolled_at: now, balance_at_enrollment: amountDue(account!) } : {}),
      });
      if (enrolled) plan = await plans.update(plan.id, await scheduleFrom(trx, tenant, plan, account!, body.start_date, now));
      await events.record(trx, tenant, [{ name: 'payment-plan.create', ids: [account!.id] }]);
      await context.within?.(trx);
      return (await load(trx, tenant, [plan]))[0]!;
    });
  } catch (error) {
    // Two creations racing past the check: the database's one-open-plan index decides.
    if (isUniqueViolation(error, 'payment_plans_one_open_per_account')) throw openPlanConflict();
    throw error;
  }
}

const openPlanConflict = () => ApiError.conflict('The debt account already has an open payment plan; change that plan instead (PUT /payment-plans/{id}).');

async function list({ db }: PlanDeps, tenant: Tenant, page: PageRequest, filter: { debt_account_id?: string; status?: Schemas['PaymentPlanStatus'] }): Promise<Listed<Plan>> {
  let debtAccountId: string | undefined;
  if (filter.debt_account_id) {
    // An unknown account has no plans: an empty page, not an error.
    debtAccountId = (await debtAccountRepo(db, tenant).find(filter.debt_account_id))?.id ?? '00000000-0000-0000-0000-000000000000';
  }
  const query = planRepo(db, tenant).query({ debtAccountId, status: filter.status });
  return listPage<PlanRow, Plan>(query, page, { columns: PLAN_COLUMNS, table: PAYMENT_PLANS, order: 'desc' }, (rows) => load(db, tenant, rows));
}

async function find({ db }: PlanDeps, tenant: Tenant, id: string): Promise<Plan> {
  const row = await planRepo(db, tenant).find(id);
  if (!row) throw notFound();
  return (await load(db, tenant, [row]))[0]!;
}

/** The open plan `id`, locked, with its account locked too (account first, as create and the scheduler lock). */
async function lockOpenPlan(trx: Knex.Transaction, tenant: Tenant, id: string): Promise<{ plan: PlanRow; account: DebtAccountRow }> {
  const unlocked = await planRepo(trx, tenant).find(id);
  if (!unlocked) throw notFound();
  const account = await lockedAccount(trx, tenant, unlocked.debt_account_id);
  const plan = await planRepo(trx, tenant).find(id, { forUpdate: true });
  if (!plan || !account) throw notFound();
  if (!OPEN_STATUSES.includes(plan.status)) throw ApiError.conflict(`The payment plan is ${plan.status}; only an open plan can be changed or canceled.`);
  return { plan, account };
}

async function update({ db, events, clock }: PlanDeps, tenant: Tenant, id: string, body: Schemas['PaymentPlanUpdate'], context: PlanContext = {}): Promise<Plan> {
  const now = nowFor(clock, tenant);
  const today = todayUtc(now);
  const at = { channel: context.channel ?? 'api', today } as const;
  return db.transaction(async (trx) => {
    const { plan, account } = await lockOpenPlan(trx, tenant, id);
    const accountTerms = termsOf(account);
    const errors: FieldErrors = {};
    if (body.start_date !== undefined) planStartErrors(body.start_date, at, errors);
    if (body.amount !== undefined) planAmountErrors(accountTerms, body.amount, body.frequency ?? plan.frequency, at, errors);
    if (body.payment_method_id !== undefined) await checkPaymentMethod(trx, tenant, errors, body.payment_method_id, account.customer_id, now);
    throwIfAny(errors);

    const terms = {
      frequency: (body.frequency ?? plan.frequency) as Frequency | null,
      start_date: body.start_date ?? plan.start_date,
      amount: body.amount ?? (plan.amount === null ? null : Number(plan.amount)),
    };
    const methodId = body.payment_method_id ?? plan.payment_method_id;
    const complete = terms.frequency !== null && terms.start_date !== null && terms.amount !== null;
    const changes: PlanValues = { ...terms, amount: terms.amount ?? undefined, payment_method_id: methodId };
    const planNow = { ...plan, ...terms, amount: terms.amount === null ? null : String(terms.amount) } as PlanRow;
    const termsChanged = body.frequency !== undefined || body.start_date !== undefined || body.amount !== undefined;

    if (!complete) {
      changes.status = 'pending_configuration';
    } else if (plan.status !== 'active' && methodId) {
      // Enrolment: the schedule starts at the plan's start date, which must not have passed.
      throwIfAny(planErrors(account, accountTerms, { start_date: terms.start_date!, amount: terms.amount!, frequency: terms.frequency }, at, 'payment_method_id'));
      Object.assign(changes, { status: 'active', enrolled_at: now, balance_at_enrollment: amountDue(account) });
      Object.assign(changes, await scheduleFrom(trx, tenant, planNow, account, terms.start_date!, now));
    } else if (plan.status !== 'active') {
      changes.status = 'pending_enrollment';
    } else if (termsChanged) {
      // Recomputed from the next unpaid instalment: what is pending is replaced.
      const nextDate = await planRepo(trx, tenant).cancelPending(plan.id);
      const start = body.start_date ?? (nextDate && nextDate > today ? nextDate : today);
      Object.assign(changes, await scheduleFrom(trx, tenant, planNow, account, start, now));
    }
    const row = await planRepo(trx, tenant).update(plan.id, changes);
    await events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [account.id] }]);
    await context.within?.(trx);
    return (await load(trx, tenant, [row]))[0]!;
  });
}

async function cancel({ db, events, clock }: PlanDeps, tenant: Tenant, id: string): Promise<void> {
  const now = nowFor(clock, tenant);
  await db.transaction(async (trx) => {
    const { plan, account } = await lockOpenPlan(trx, tenant, id);
    await planRepo(trx, tenant).cancelPending(plan.id);
    await planRepo(trx, tenant).update(plan.id, { status: 'canceled', canceled_at: now, ended_at: now });
    await events.record(trx, tenant, [{ name: 'payment-plan.delete', ids: [account.id] }]);
  });
}

export function planService(deps: PlanDeps) {
  return {
    create: (tenant: Tenant, body: Schemas['PaymentPlanEnrollment'], context?: PlanContext) => create(deps, tenant, body, context),
    list: (tenant: Tenant, page: PageRequest, filter: { debt_account_id?: string; status?: Schemas['PaymentPlanStatus'] }) => list(deps, tenant, page, filter),
    find: (tenant: Tenant, id: string) => find(deps, tenant, id),
    update: (tenant: Tenant, id: string, body: Schemas['PaymentPlanUpdate'], context?: PlanContext) => update(deps, tenant, id, body, context),
    cancel: (tenant: Tenant, id: string) => cancel(deps, tenant, id),
  };
}
