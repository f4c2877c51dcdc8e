/**
 * Debt accounts as the API shows them in one statement: GET /debt-accounts/{id}, and a page of
 * accounts (GET /debt-accounts, the lookup, a customer's accounts) with its count. Each account
 * comes with every relation it shows (its locations, plan, customer, latest charges and
 * transactions, autopay, documents) as JSON sub-selects of the account's row, where the loader
 * (debt-account-loader.ts) reads each relation with a statement of its own. Each statement is a
 * round trip and, under load, a turn in the pool's queue (behind a hundred charges' statements);
 * one statement is one turn. Disputes, which few accounts have, are read by the loader's own
 * statements, only for the accounts that have one.
 *
 * A relation's rows come back as JSON, and become the rows its mapper takes exactly as the driver
 * would have made them (db/json-rows.ts).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { UUID } from '../db/tenant';
import type { PageRequest } from '../http/pagination';
import { groupBy } from '../kernel/collections';
import { bare, jsonOf as json, revive, type Shape } from '../db/json-rows';
import { concurrently } from '../db/concurrently';
import { CHARGE_COLUMNS, TRANSACTION_COLUMNS, type ChargeRow, type TransactionRow } from '../charge-store/charge-repo';
import { CUSTOMER_COLUMNS, type CustomerRow } from '../customer-store/customer-repo';
import { LOCATION_COLUMNS, type LocationRow } from '../locations/location-repo';
import { disputeRepo } from '../dispute-store/dispute-repo';
import { loadDisputes } from '../dispute-store/dispute-mapper';
import { readSettings } from '../settings/settings-service';
import { AUTOPAY_COLUMNS, type AutopayRow } from './account-autopay';
import { DEBT_ACCOUNT_COLUMNS, PLAN_COLUMNS, type DebtAccountRow, type PaymentPlanRow } from './debt-account-repo';
import { debtAccountToApi, type AccountDocument } from './debt-account-mapper';
import { EMBEDDED_PAYMENTS } from './debt-account-loader';

const LOCATION: Shape = { columns: [...bare(LOCATION_COLUMNS), 'debt_accounts_count'], timestamps: ['created_at', 'updated_at'], bigints: [] };
const PLAN: Shape = { columns: PLAN_COLUMNS, timestamps: ['created_at', 'updated_at'], bigints: ['amount'] };
const CUSTOMER: Shape = { columns: bare(CUSTOMER_COLUMNS), timestamps: ['email_preference_changed_at', 'created_at', 'updated_at'], bigints: [] };
const CHARGE: Shape = {
  columns: bare(CHARGE_COLUMNS),
  timestamps: ['due_at', 'charged_at', 'settles_at', 'settled_at', 'created_at', 'updated_at'],
  bigints: ['amount', 'fees', 'refunded_amount'],
};
const TRANSACTION: Shape = { columns: bare(TRANSACTION_COLUMNS), timestamps: ['submitted_at', 'created_at'], bigints: ['number', 'amount'] };
const AUTOPAY: Shape = { columns: bare(AUTOPAY_COLUMNS), timestamps: ['next_run_at', 'last_run_at', 'created_at', 'updated_at'], bigints: ['amount'] };
const DOCUMENT: Shape = { columns: ['id', 'debt_account_id', 'name', 'created_at'], timestamps: ['created_at'], bigints: [] };

/** Rows of `table` of the account's tenant. */
const ofTenant = (alias: string) => `${alias}.organization_id = debt_accounts.organization_id AND ${alias}.environment = debt_accounts.environment`;

/** The account's additional locations, as the loader orders them. */
const LINKS = `SELECT l.location_id FROM debt_account_locations l WHERE l.debt_account_id = debt_accounts.id AND ${ofTenant('l')}`;

/** The newest rows of `table` of the account, newest first, at most EMBEDDED_PAYMENTS (a constant: the text stays the same). */
const latest = (table: string, shape: Shape) =>
  `(SELECT coalesce(json_agg(${json('x', shape)} ORDER BY x.created_at DESC, x.id DESC), '[]')
      FROM (SELECT * FROM ${table} WHERE ${table}.debt_account_id = debt_accounts.id AND ${ofTenant(table)} ORDER BY ${table}.created_at DESC, ${table}.id DESC LIMIT ${EMBEDDED_PAYMENTS}) x)`;

/** The select list of one account of `debt_accounts` (joined with its `parent`): its columns and its relations. */
function selectList(include: Set<string>): string {
  const additional = include.has('locations');
  return `${DEBT_ACCOUNT_COLUMNS.join(', ')},
    ${additional ? `(SELECT coalesce(json_agg(l.location_id ORDER BY l.created_at, l.location_id), '[]') FROM debt_account_locations l WHERE l.debt_account_id = debt_accounts.id AND ${ofTenant('l')})` : `'[]'::json`} AS links,
    (SELECT json_agg(${json('loc', LOCATION)}) FROM locations loc
      WHERE ${ofTenant('loc')} AND (loc.id = debt_accounts.location_id${additional ? ` OR loc.id IN (${LINKS})` : ''})) AS locations,
    (SELECT ${json('p', PLAN)} FROM payment_plans p WHERE p.debt_account_id = debt_accounts.id AND ${ofTenant('p')} ORDER BY p.created_at DESC, p.id DESC LIMIT 1) AS plan,
    ${include.has('customer') ? `(SELECT ${json('c', CUSTOMER)} FROM customers c WHERE c.id = debt_accounts.customer_id AND ${ofTenant('c')})` : 'NULL::json'} AS customer,
    ${latest('charges', CHARGE)} AS charges,
    ${latest('transactions', TRANSACTION)} AS transactions,
    (SELECT ${json('ap', AUTOPAY)} FROM autopays ap WHERE ap.debt_account_id = debt_accounts.id AND ${ofTenant('ap')}) AS autopay,
    (SELECT coalesce(json_agg(${json('d', DOCUMENT)} ORDER BY d.created_at, d.id), '[]') FROM documents d
      WHERE d.debt_account_id = debt_accounts.id AND ${ofTenant('d')} AND NOT d.status = 'voided') AS documents,
    EXISTS (SELECT 1 FROM debt_account_disputes x WHERE x.debt_account_id = debt_accounts.id AND ${ofTenant('x')}) AS disputed`;
}

/** The statements' texts, by kind and set of includes (named prepared statements: the same text each time). */
const statements = new Map<string, string>();
function statementFor(kind: string, include: Set<string>, build: (select: string) => string): string {
  const key = `${kind}|${[...include].sort().join(',')}`;
  let sql = statements.get(key);
  if (!sql) statements.set(key, (sql = build(selectList(include))));
  return sql;
}

type Read = DebtAccountRow & {
  links: string[];
  locations: (LocationRow & { debt_accounts_count: number })[] | null;
  plan: Record<string, unknown> | null;
  customer: Record<string, unknown> | null;
  charges: Record<string, unknown>[];
  transactions: Record<string, unknown>[];
  autopay: Record<string, unknown> | null;
  documents: Record<string, unknown>[];
  disputed: boolean;
};

/** The read rows as API objects; the disputes of those that have any read by the loader's statements. */
async function toApi(db: Knex, tenant: Tenant, rows: Read[], include: Set<string>): Promise<components['schemas']['DebtAccount'][]> {
  if (rows.length === 0) return [];
  const disputed = rows.filter((row) => row.disputed).map((row) => row.id);
  const disputes = disputed.length > 0 ? await disputesOf(db, tenant, disputed) : new Map<string, components['schemas']['Dispute'][]>();
  const counted = include.has('location') || include.has('locations');
  const relations = {
    include,
    customers: new Map<string, CustomerRow>(),
    locations: new Map<string, LocationRow>(),
    additional: new Map<string, string[]>(),
    plans: new Map<string, PaymentPlanRow>(),
    autopays: new Map<string, AutopayRow>(),
    usage: new Map<string, number>(),
    charges: new Map<string, ChargeRow[]>(),
    transactions: new Map<string, TransactionRow[]>(),
    documents: new Map<string, AccountDocument[]>(),
    disputes,
  };
  for (const row of rows) {
    for (const raw of row.locations ?? []) {
      const location = revive<LocationRow & { debt_accounts_count: number }>(LOCATION, raw as unknown as Record<string, unknown>);
      relations.locations.set(location.id, location);
      if (counted) relations.usage.set(location.id, Number(location.debt_accounts_count));
    }
    if (row.customer) relations.customers.set(row.customer_id, revive<CustomerRow>(CUSTOMER, row.customer));
    relations.additional.set(row.id, row.links);
    if (row.plan) relations.plans.set(row.id, revive<PaymentPlanRow>(PLAN, row.plan));
    if (row.autopay) relations.autopays.set(row.id, revive<AutopayRow>(AUTOPAY, row.autopay));
    relations.charges.set(row.id, row.charges.map((charge) => revive<ChargeRow>(CHARGE, charge)));
    relations.transactions.set(row.id, row.transactions.map((transaction) => revive<TransactionRow>(TRANSACTION, transaction)));
    relations.documents.set(row.id, row.documents.map((document) => revive<AccountDocument>(DOCUMENT, document)));
  }
  return rows.map((row) => debtAccountToApi(row, relations));
}

/**
 * The account `{id|external_id}` as the API shows it (a UUID as id first, then as external_id,
 * as debtAccountRepo.find), or undefined when the tenant has none.
 */
export async function readDebtAccount(db: Knex, tenant: Tenant, key: string, include: Set<string>): Promise<components['schemas']['DebtAccount'] | undefined> {
  const sql = statementFor(
    'one',
    include,
    (select) => `SELECT ${select}
  FROM debt_accounts LEFT JOIN debt_accounts AS parent ON parent.id = debt_accounts.parent_id
  WHERE debt_accounts.organization_id = ? AND debt_accounts.environment = ?
    AND (debt_accounts.id = ?::uuid OR debt_accounts.external_id = ?)
  ORDER BY debt_accounts.id = ?::uuid DESC NULLS LAST
  LIMIT 1`,
  );
  const id = UUID.test(key) ? key : null;
  const { rows } = await db.raw<{ rows: Read[] }>(sql, [tenant.organizationId, tenant.environment, id, key, id]);
  return (await toApi(db, tenant, rows, include))[0];
}

/** Which of the tenant's accounts a page lists: SQL on `debt_accounts` (a condition, `?` for its bindings). */
export interface AccountFilter {
  sql: string;
  bindings: readonly Knex.Value[];
}

/**
 * One page of the tenant's accounts that `filter` selects (all of them without one), oldest
 * first (created_at, id) as every list, with the count of all it selects: one statement. The
 * rows are those of the envelope (their created_at).
 */
export async function readDebtAccountPage(
  db: Knex,
  tenant: Tenant,
  filter: AccountFilter | undefined,
  { page, limit }: PageRequest,
  include: Set<string>,
): Promise<{ total: number; rows: Read[]; data: components['schemas']['DebtAccount'][] }> {
  const sql = statementFor(
    `page:${filter?.sql ?? ''}`,
    include,
    (select) => `WITH listed AS (
    SELECT debt_accounts.id, debt_accounts.created_at FROM debt_accounts
     WHERE debt_accounts.organization_id = ? AND debt_accounts.environment = ?${filter ? ` AND (${filter.sql})` : ''}
  ), page AS (
    SELECT listed.id FROM listed ORDER BY listed.created_at, listed.id LIMIT ? OFFSET ?
  )
  SELECT (SELECT count(*) FROM listed) AS total, ${select}
    FROM (SELECT 1) AS one
    LEFT JOIN (page JOIN debt_accounts ON debt_accounts.id = page.id LEFT JOIN debt_accounts AS parent ON parent.id = debt_accounts.parent_id) ON true
   ORDER BY debt_accounts.created_at, debt_accounts.id`,
  );
  const { rows } = await db.raw<{ rows: (Read & { total: string })[] }>(sql, [
    tenant.organizationId,
    tenant.environment,
    ...(filter?.bindings ?? []),
    limit,
    (page - 1) * limit,
  ]);
  const total = Number(rows[0]?.total ?? 0);
  const accounts = rows.filter((row) => row.id !== null);
  return { total, rows: accounts, data: await toApi(db, tenant, accounts, include) };
}

/** The disputes of accounts as the API shows them, by account (the loader's statements: few accounts have any). */
async function disputesOf(db: Knex, tenant: Tenant, accountIds: string[]): Promise<Map<string, components['schemas']['Dispute'][]>> {
  const [rows, settings] = await concurrently(
    db,
    () => disputeRepo(db, tenant).ofAccounts(accountIds),
    () => readSettings(db, tenant),
  );
  return groupBy(await loadDisputes(db, tenant, rows, settings.dispute_hold), (dispute) => dispute.debt_account_id);
}

/** Every account of the tenant that `filter` selects, oldest first, in one statement (a customer's accounts). */
export async function readDebtAccountsWhere(db: Knex, tenant: Tenant, filter: AccountFilter, include: Set<string>): Promise<{ rows: Read[]; data: components['schemas']['DebtAccount'][] }> {
  const sql = statementFor(
    `where:${filter.sql}`,
    include,
    (select) => `SELECT ${select}
  FROM debt_accounts LEFT JOIN debt_accounts AS parent ON parent.id = debt_accounts.parent_id
  WHERE debt_accounts.organization_id = ? AND debt_accounts.environment = ? AND (${filter.sql})
  ORDER BY debt_accounts.created_at, debt_accounts.id`,
  );
  const { rows } = await db.raw<{ rows: Read[] }>(sql, [tenant.organizationId, tenant.environment, ...filter.bindings]);
  return { rows, data: await toApi(db, tenant, rows, include) };
}
