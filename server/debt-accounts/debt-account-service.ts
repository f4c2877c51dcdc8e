import type { Knex } from 'knex';
import { announce } from '../events/listeners';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { externalIdUnique, isForeignKeyViolation, TAKEN } from '../db/tenant';
import { customerRepo } from '../customer-store/customer-repo';
import { disputeRepo } from '../dispute-store/dispute-repo';
import { mergeMetadata } from '../kernel/metadata';
import { loadDebtAccounts } from './debt-account-loader';
import { sortBillingTypes } from '../kernel/billing-types';
import { DEBT_ACCOUNT_COLUMNS, debtAccountRepo, type DebtAccountRow, type DebtAccountValues, DEBT_ACCOUNTS } from './debt-account-repo';
import { resolveAdditionalLocations, resolveLocation } from './locations-of-account';
import type { LocationRow } from '../locations/location-repo';
import type { RecordedEvent } from '../events/events';
import type { AppDeps } from '../deps';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { lookupFilter, type LookupQuery } from './lookup';
import { todayUtc } from '../kernel/dates';
import { offeredOptions } from '../payment-terms/payment-terms';
import { nowFor } from '../kernel/clock';
import { readDebtAccount, readDebtAccountPage, type AccountFilter } from './debt-account-read';
import { itemizationOf } from './itemization';

type Schemas = components['schemas'];
type DebtAccount = Schemas['DebtAccount'];


function planStatus(plan: NonNullable<Schemas['PaymentPlanCreate']>): Schemas['PaymentPlanStatus'] {
  return plan.frequency && plan.start_date && plan.amount ? 'pending_enrollment' : 'pending_configuration';
}

/**
 * Rules of a proposed plan that the schema cannot state: the account's billing_type must offer
 * a plan (as the payment terms read it), a child's plan is its parent's, and the start has not
 * passed. Its window and amount are the payment terms' when a payment method enrolls the plan.
 */
function checkPlan(body: Schemas['DebtAccountCreate'], now: Date): void {
  const plan = body.payment_plan;
  if (!plan) return;
  const errors: FieldErrors = {};
  if (!offeredOptions(body.billing_type).includes('payment-plan')) {
    errors.payment_plan = ['is only accepted when billing_type offers payment-plan'];
  } else if (body.parent_external_id) {
    errors.payment_plan = ['is not accepted on a child account: the customer deals with the parent'];
  }
  if (plan.start_date && plan.start_date < todayUtc(now)) errors['payment_plan.start_date'] = ['must be today or later'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
}

/** Rules: a different value replaces, null on a key deletes it, null as a whole deletes all. */
function mergeRules(current: DebtAccountRow['rules'], update: Schemas['DebtAccountRulesUpdate'] | undefined): DebtAccountRow['rules'] {
  if (update === undefined) return current;
  if (update === null) return {};
  const next: Record<string, number> = { ...(current as Record<string, number>) };
  for (const [key, value] of Object.entries(update)) {
    if (value === null || value === undefined) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** The parent a child names: an account of the same customer that is not a child itself. */
async function parentFor(trx: Knex, tenant: Tenant, parentExternalId: string, customerId: string, self?: string): Promise<DebtAccountRow> {
  const parent = await debtAccountRepo(trx, tenant).findByExternalId(parentExternalId);
  const problem = !parent
    ? 'does not match a debt account'
    : parent.id === self
      ? 'cannot be the account itself'
      : parent.customer_id !== customerId
        ? 'is a debt account of another customer'
        : parent.parent_id !== null
          ? 'is itself a child account: nesting is one level deep'
          : undefined;
  if (problem) throw ApiError.field('parent_external_id', problem);
  return parent!;
}


/** Locations created on the fly by an account request (location_id unknown, locations[] new). */
const locationsCreated = (created: LocationRow[]): RecordedEvent => ({ name: 'location.create', ids: created.map((row) => row.id) });

/** The parents whose sums changed: they changed too (debt-account.update). */
function parentsChanged(parentIds: (string | null | undefined)[]): RecordedEvent {
  return { name: 'debt-account.update', ids: [...new Set(parentIds.filter((id): id is string => typeof id === 'string'))] };
}

async function loadOne(trx: Knex, tenant: Tenant, id: string, include: Set<string>): Promise<DebtAccount> {
  const row = await debtAccountRepo(trx, tenant).find(id);
  return (await loadDebtAccounts(trx, tenant, [row!], include))[0]!;
}

export type DebtAccountDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

/** A page of the accounts `filter` selects with their count, in one statement (debt-account-read.ts). */
async function list({ db }: DebtAccountDeps, tenant: Tenant, filter: AccountFilter | undefined, page: PageRequest, include: Set<string>): Promise<Listed<DebtAccount>> {
  return readDebtAccountPage(db, tenant, filter, page, include);
}

/** The validation notice's day: not after today on the tenant's clock (it cannot have been sent yet). */
function noticeDay(day: string | null | undefined, now: Date): string | null {
  if (!day) return null;
  if (day > todayUtc(now)) throw ApiError.field('validation_notice_sent_at', `must be today (${todayUtc(now)}) or earlier`);
  return day;
}

/** The request's itemization as stored (itemization.ts), or a 422 on its date. */
function itemizationDay(input: Schemas['DebtAccountCreate']['itemization'], now: Date): DebtAccountValues['itemization'] {
  const checked = itemizationOf(input, todayUtc(now));
  if ('error' in checked) throw ApiError.field('itemization.itemization_date', checked.error);
  return checked.value;
}

/** One account as the API shows it, in one statement (debt-account-read.ts). */
async function find({ db }: DebtAccountDeps, tenant: Tenant, key: string, include: Set<string>): Promise<DebtAccount> {
  const account = await readDebtAccount(db, tenant, key, include);
  if (!account) throw ApiError.notFound('Debt account');
  return account;
}

async function create({ db, events, clock }: DebtAccountDeps, tenant: Tenant, body: Schemas['DebtAccountCreate'], include: Set<string>): Promise<DebtAccount> {
  checkPlan(body, nowFor(clock, tenant));
  return externalIdUnique(DEBT_ACCOUNTS, () =>
    db.transaction(async (trx) => {
      const accounts = debtAccountRepo(trx, tenant);
      const customer = await customerRepo(trx, tenant).find(body.customer_id);
      if (!customer) throw ApiError.field('customer_id', 'does not match a customer');
      if (body.external_id && (await accounts.externalIdTaken(body.external_id))) throw ApiError.field('external_id', TAKEN);
      const parent = body.parent_external_id ? await parentFor(trx, tenant, body.parent_external_id, customer.id) : undefined;
      // The parent's row lock: sibling changes queue here, so the sums are never computed from a stale view.
      if (parent) {
        await accounts.lockParents([parent.id]);
        const locked = await accounts.find(parent.id);
        if (!locked || locked.parent_id !== null) throw ApiError.field('parent_external_id', 'changed while this request ran; send it again');
      }
      const created: LocationRow[] = [];
      const location = await resolveLocation(trx, tenant, body.location_id, body.location_name, body.location_type, (row) => created.push(row));
      const id = await accounts.insert({
        customer_id: customer.id,
        location_id: location.id,
        parent_id: parent?.id ?? null,
        external_id: body.external_id ?? null,
        external_account_number: body.external_account_number ?? null,
        billing_type: body.billing_type ? sortBillingTypes(body.billing_type) : null,
        balance: body.balance,
        current_balance: body.current_balance ?? body.balance,
        status: body.status ?? 'active',
        external_status: body.external_status ?? null,
        rules: body.rules ?? {},
        metadata: body.metadata ?? {},
        itemization: itemizationDay(body.itemization, nowFor(clock, tenant)) ?? null,
        validation_notice_sent_at: noticeDay(body.validation_notice_sent_at, nowFor(clock, tenant)),
      });
      if (body.locations) {
        await accounts.replaceAdditionalLocations(id, await resolveAdditionalLocations(trx, tenant, body.locations, location.id, (row) => created.push(row)));
      }
      if (body.payment_plan) {
        const plan = body.payment_plan;
        await accounts.insertPlan(id, {
          frequency: plan.frequency ?? null,
          start_date: plan.start_date ?? null,
          amount: plan.amount ?? null,
          status: planStatus(plan),
        });
      }
      if (parent) await accounts.recalculate(parent.id);
      await events.record(trx, tenant, [
        locationsCreated(created),
        { name: 'debt-account.create', ids: [id] },
        // Its plan, when it was created with one.
        { name: 'payment-plan.create', ids: body.payment_plan ? [id] : [] },
        parentsChanged([parent?.id]),
      ]);
      return loadOne(trx, tenant, id, include);
    }),
  );
}

async function update(
  { db, events, clock }: DebtAccountDeps,
  tenant: Tenant,
  key: string,
  body: Schemas['DebtAccountUpdate'],
  include: Set<string>,
): Promise<DebtAccount> {
  return externalIdUnique(DEBT_ACCOUNTS, () =>
    db.transaction(async (trx) => {
      const accounts = debtAccountRepo(trx, tenant);
      const found = await accounts.find(key);
      if (!found) throw ApiError.notFound('Debt account');

      const customerId = body.customer_id === undefined ? found.customer_id : (await customerRepo(trx, tenant).find(body.customer_id))?.id;
      if (!customerId) throw ApiError.field('customer_id', 'does not match a customer');
      const parentKey = body.parent_external_id === undefined ? found.parent_external_id : body.parent_external_id;
      const newParent = parentKey ? await parentFor(trx, tenant, parentKey, customerId, found.id) : undefined;

      // Lock order everywhere: parents (by id), then the account itself.
      await accounts.lockParents([found.parent_id, newParent?.id]);
      const current = await accounts.find(found.id, { forUpdate: true });
      if (!current) throw ApiError.notFound('Debt account');
      if (current.parent_id !== found.parent_id) throw ApiError.conflict('The account was moved while this request ran; send it again.');
      const children = await accounts.childCount(current.id);

      const errors: FieldErrors = {};
      if (children > 0 && newParent) errors.parent_external_id = ['an account with children cannot become a child'];
      if (children > 0 && customerId !== current.customer_id) errors.customer_id = ['an account with children cannot move to another customer'];
      if (children > 0) {
        const sums = await accounts.sums(current.id);
        if (body.balance !== sums.balance) errors.balance = [`is the sum of the children's balances (${sums.balance}); change a child instead`];
        if (body.current_balance !== undefined && body.current_balance !== sums.current_balance) {
          errors.current_balance = [`is the sum of the children's current balances (${sums.current_balance}); change a child instead`];
        }
      }
      if (body.external_id && (await accounts.externalIdTaken(body.external_id, current.id))) errors.external_id = [TAKEN];
      if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);

      const created: LocationRow[] = [];
      const onCreate = (row: LocationRow) => created.push(row);
      const changes: DebtAccountValues = { customer_id: customerId, parent_id: newParent?.id ?? null, balance: body.balance };
      if (body.location_id !== undefined) {
        changes.location_id = (await resolveLocation(trx, tenant, body.location_id, body.location_name, body.location_type, onCreate)).id;
        await accounts.detachAdditional(current.id, changes.location_id);
      }
      if (body.current_balance !== undefined) changes.current_balance = body.current_balance;
      if (body.external_id !== undefined) changes.external_id = body.external_id;
      if (body.external_account_number !== undefined) changes.external_account_number = body.external_account_number;
      if (body.billing_type !== undefined) changes.billing_type = sortBillingTypes(body.billing_type);
      if (body.status !== undefined) changes.status = body.status;
      if (body.external_status !== undefined) changes.external_status = body.external_status;
      if (body.rules !== undefined) changes.rules = mergeRules(current.rules, body.rules);
      if (body.itemization !== undefined) changes.itemization = itemizationDay(body.itemization, nowFor(clock, tenant));
      if (body.metadata !== undefined) changes.metadata = mergeMetadata(current.metadata, body.metadata);
      await accounts.update(current.id, changes);
      if (customerId !== current.customer_id) await disputeRepo(trx, tenant).followAccount(current.id, customerId);

      if (body.locations !== undefined) {
        const primary = changes.location_id ?? current.location_id;
        await accounts.replaceAdditionalLocations(current.id, await resolveAdditionalLocations(trx, tenant, body.locations, primary, onCreate));
      }
      for (const parentId of new Set([current.parent_id, newParent?.id])) if (parentId) await accounts.recalculate(parentId);
      await announce(trx, events, tenant, 'account.updated', { accountIds: [current.id, current.parent_id, newParent?.id].filter((id): id is string => !!id) });
      await events.record(trx, tenant, [
        locationsCreated(created),
        { name: 'debt-account.update', ids: [current.id] },
        // The parent left behind and the new one.
        parentsChanged([current.parent_id, newParent?.id]),
      ]);
      return loadOne(trx, tenant, current.id, include);
    }),
  );
}

/**
 * What the database keeps (ON DELETE RESTRICT): charges, transactions, external charges and
 * disputes are records of collection (12 CFR 1006.100), so an account that has any is closed,
 * not deleted.
 */
const KEPT_RECORDS = 'This debt account has charges, transactions or disputes on record, which are kept; set its status to closed instead of deleting it.';

async function remove(deps: DebtAccountDeps, tenant: Tenant, key: string): Promise<void> {
  try {
    await removeUnreferenced(deps, tenant, key);
  } catch (error) {
    if (isForeignKeyViolation(error)) throw ApiError.conflict(KEPT_RECORDS);
    throw error;
  }
}

async function removeUnreferenced({ db, events }: DebtAccountDeps, tenant: Tenant, key: string): Promise<void> {
  await db.transaction(async (trx) => {
    const accounts = debtAccountRepo(trx, tenant);
    const found = await accounts.find(key);
    if (!found) throw ApiError.notFound('Debt account');
    await accounts.lockParents([found.parent_id]);
    const current = await accounts.find(found.id, { forUpdate: true });
    if (!current) throw ApiError.notFound('Debt account');
    if (current.parent_id !== found.parent_id) throw ApiError.conflict('The account was moved while this request ran; send it again.');
    if ((await accounts.childCount(current.id)) > 0) {
      throw ApiError.conflict('This debt account has children; delete or move them first.');
    }
    // Recorded first: the payloads show the account, and its plan (deleted with it), as they were just before.
    await events.record(trx, tenant, [
      { name: 'debt-account.delete', ids: [current.id] },
      { name: 'payment-plan.delete', ids: [current.id] },
    ]);
    await accounts.delete(current.id);
    if (current.parent_id) await accounts.recalculate(current.parent_id);
    await events.record(trx, tenant, [parentsChanged([current.parent_id])]);
  });
}

export function debtAccountService(deps: DebtAccountDeps) {
  return {
    list: (tenant: Tenant, page: PageRequest, include: Set<string>) => list(deps, tenant, undefined, page, include),
    /** The accounts of the customers whose details match the query's flow. */
    lookup: (tenant: Tenant, query: LookupQuery, page: PageRequest, include: Set<string>) =>
      list(deps, tenant, lookupFilter(deps.db, tenant, query), page, include),
    find: (tenant: Tenant, key: string, include: Set<string>) => find(deps, tenant, key, include),
    create: (tenant: Tenant, body: Schemas['DebtAccountCreate'], include: Set<string>) => create(deps, tenant, body, include),
    update: (tenant: Tenant, key: string, body: Schemas['DebtAccountUpdate'], include: Set<string>) => update(deps, tenant, key, body, include),
    remove: (tenant: Tenant, key: string) => remove(deps, tenant, key),
  };
}
