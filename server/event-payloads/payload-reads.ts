/**
 * The event payloads' own read model: the SQL that loads what payloads show, batched (one query
 * per table, whatever the number of events) and each row once per recording. It reads the
 * resource tables directly, never through a resource's store or repo, so that the resources
 * depend on the events port only and never the other way round
 * (test/architecture/event-payloads.test.ts). Runs on the recording
 * transaction, so a payload shows the change exactly as it commits.
 */
import { loadActivity, type ActivityRow } from './tracking-payloads';
import { loadDocumentTicketRows, type DocumentTicketRows } from './document-ticket-reads';
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { groupBy } from '../kernel/collections';
import type { ShownPaymentMethod } from '../kernel/masking';
import { loadPaymentRows, noPaymentNeeds, type PaymentNeeds, type PaymentRows } from './payment-reads';
import { loadOffers, loadOffersOf, offerChargeIds, type OfferRow } from './settlement-reads';
import { loadDisputeRows, type DisputeRows } from './dispute-reads';
import type { Built } from './built-once';

type S = components['schemas'];

export interface CustomerRow {
  id: string;
  external_id: string | null;
  name: string;
  email: string;
  email_source: 'creditor' | 'debtor' | 'skip_trace' | 'other';
  email_work_address: boolean;
  email_creditor_notice_date: string | null;
  phone: string | null;
  date_of_birth: string | null;
  ssn_last4: string | null;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export interface AddressRow {
  id: string;
  customer_id: string;
  name: string | null;
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  postal_code: string;
  is_primary: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentMethodRow extends ShownPaymentMethod {
  id: string;
  customer_id: string;
  is_primary: boolean;
  /** Whether a charge still `scheduled` is made with it. */
  has_scheduled_charge: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface DebtAccountRow {
  id: string;
  customer_id: string;
  location_id: string;
  parent_id: string | null;
  parent_external_id: string | null;
  external_id: string | null;
  external_account_number: string | null;
  billing_type: S['BillingType'][] | null;
  balance: string;
  current_balance: string;
  status: S['DebtAccountStatus'];
  external_status: string | null;
  rules: { min_payment_amount?: number };
  metadata: Record<string, string>;
  itemization: S['Itemization'] | null;
  /** `YYYY-MM-DD`. */
  validation_notice_sent_at: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentPlanRow {
  id: string;
  debt_account_id: string;
  frequency: S['PaymentPlanFrequency'] | null;
  start_date: string | null;
  amount: string | null;
  status: S['PaymentPlanStatus'];
  payment_method_id: string | null;
  enrolled_at: Date | null;
  canceled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One instalment of a plan. */
export interface PlanChargeRow {
  id: string;
  payment_plan_id: string;
  charge_date: string;
  amount: string;
  status: string;
  attempts: number;
  successfully_charged_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface LocationRow {
  id: string;
  external_id: string | null;
  name: string;
  type: S['LocationType'];
  card: boolean;
  ach: boolean;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export interface ImportRow {
  id: string;
  count: number;
  failed: number;
  created_at: Date;
  completed_at: Date;
}

/** What the events of one recording need loaded. */
export interface Needs {
  /** Customers shown whole (their addresses, payment methods and accounts). */
  customers: Set<string>;
  /** Accounts shown with their customer, family (parent, children), locations and plan. */
  accounts: Set<string>;
  /** Accounts whose customer is shown whole too (a plan's payload embeds it). */
  accountsWithCustomer: Set<string>;
  /** Locations shown with their usage count. */
  locations: Set<string>;
  imports: Set<string>;
  /** Portal activity rows that tracking events report. */
  activity: Set<string>;
  /** Charges, transactions, and the accounts whose latest payments are shown. */
  payments: PaymentNeeds;
  /** Document signatures that signature-document.signed tells. */
  signatures: Set<string>;
  /** Tickets shown with their threads. */
  tickets: Set<string>;
  /** Settlement offers shown whole. */
  offers: Set<string>;
  /** Disputes shown with their thread, files and account. */
  disputes: Set<string>;
  /** Accounts whose payload lists their disputes (`disputes`, `active_dispute`). */
  accountDisputes: Set<string>;
}

export const noNeeds = (): Needs => ({
  customers: new Set(),
  accounts: new Set(),
  accountsWithCustomer: new Set(),
  locations: new Set(),
  imports: new Set(),
  activity: new Set(),
  payments: noPaymentNeeds(),
  signatures: new Set(),
  tickets: new Set(),
  offers: new Set(),
  disputes: new Set(),
  accountDisputes: new Set(),
});

export interface PayloadRows extends Built {
  customers: Map<string, CustomerRow>;
  /** By customer id, oldest first. */
  addresses: Map<string, AddressRow[]>;
  paymentMethods: Map<string, PaymentMethodRow[]>;
  accountsOfCustomer: Map<string, DebtAccountRow[]>;
  accounts: Map<string, DebtAccountRow>;
  /** By parent id, oldest first. */
  children: Map<string, DebtAccountRow[]>;
  locations: Map<string, LocationRow>;
  /** How many accounts use each location of `Needs.locations`. */
  locationUsage: Map<string, number>;
  /** By debt account id. */
  plans: Map<string, PaymentPlanRow>;
  /** By plan id, by charge date. */
  planCharges: Map<string, PlanChargeRow[]>;
  /** The payment methods plans charge, by id. */
  planMethods: Map<string, PaymentMethodRow>;
  imports: Map<string, ImportRow>;
  activity: Map<string, ActivityRow>;
  payments: PaymentRows;
  /** Signed documents, accounts' documents, tickets and their threads. */
  docs: DocumentTicketRows;
  /** Settlement offers by id (those named), and each account's latest offer by account id. */
  offers: Map<string, OfferRow>;
  accountOffers: Map<string, OfferRow>;
  disputes: Map<string, DisputeRows>;
  /** The disputes of each account of `Needs.accountDisputes`, by account id, oldest first (received). */
  accountDisputes: Map<string, string[]>;
}

const OLDEST_FIRST = (table: string) => [
  { column: `${table}.created_at`, order: 'asc' as const },
  { column: `${table}.id`, order: 'asc' as const },
];

const CUSTOMER_COLUMNS = ['id', 'external_id', 'name', 'email', 'email_source', 'email_work_address', 'email_creditor_notice_date', 'phone', 'date_of_birth', 'ssn_last4', 'metadata', 'created_at', 'updated_at'];
const ADDRESS_COLUMNS = ['id', 'customer_id', 'name', 'line1', 'line2', 'city', 'state', 'country', 'postal_code', 'is_primary', 'created_at', 'updated_at'];
const PAYMENT_METHOD_COLUMNS = [
  'id',
  'customer_id',
  'type',
  'card_holder',
  'card_last4',
  'card_brand',
  'card_exp_month',
  'card_exp_year',
  'card_zip',
  'account_holder',
  'account_type',
  'routing_number_masked',
  'account_number_masked',
  'account_zip',
  'account_state',
  'is_primary',
  'created_at',
  'updated_at',
];
const ACCOUNT_COLUMNS = [
  ...['id', 'customer_id', 'location_id', 'parent_id', 'external_id', 'external_account_number', 'billing_type', 'balance', 'current_balance', 'status', 'external_status', 'rules', 'metadata', 'itemization', 'validation_notice_sent_at', 'created_at', 'updated_at'].map(
    (column) => `account.${column}`,
  ),
  'parent.external_id as parent_external_id',
];
const PLAN_COLUMNS = ['id', 'debt_account_id', 'frequency', 'start_date', 'amount', 'status', 'payment_method_id', 'enrolled_at', 'canceled_at', 'created_at', 'updated_at'];
const PLAN_CHARGE_COLUMNS = ['id', 'payment_plan_id', 'charge_date', 'amount', 'status', 'attempts', 'successfully_charged_at', 'created_at', 'updated_at'];
const LOCATION_COLUMNS = ['id', 'external_id', 'name', 'type', 'card', 'ach', 'metadata', 'created_at', 'updated_at'];

const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));

/**
 * Every account of the customers concerned: those named, and those of the named accounts (a
 * parent and its children always share the customer, so one customer's accounts are a
 * family's). One query: the customers gathered first into one array (the named ones and the
 * named accounts', by primary key), then their accounts found by the customer index. (An OR of
 * the two lists made PostgreSQL test every account of the tenant against a hashed subplan.)
 */
function accountsOf(db: Knex, tenant: Tenant, customerIds: string[], accountIds: string[]): Promise<(DebtAccountRow & AccountHas)[]> {
  return db('debt_accounts as account')
    .leftJoin('debt_accounts as parent', 'parent.id', 'account.parent_id')
    .where('account.organization_id', tenant.organizationId)
    .andWhere('account.environment', tenant.environment)
    .whereRaw(
      `account.customer_id = ANY (ARRAY(SELECT unnest(?::uuid[]) UNION SELECT customer_id FROM debt_accounts WHERE id = ANY(?::uuid[]) AND organization_id = ? AND environment = ?))`,
      [customerIds, accountIds, tenant.organizationId, tenant.environment],
    )
    .orderBy(OLDEST_FIRST('account'))
    .select([
      ...ACCOUNT_COLUMNS,
      db.raw(`EXISTS (SELECT 1 FROM payment_plans WHERE payment_plans.debt_account_id = account.id) AS has_plans`),
      db.raw(`EXISTS (SELECT 1 FROM settlement_offers WHERE settlement_offers.debt_account_id = account.id) AS has_offers`),
      db.raw(`EXISTS (SELECT 1 FROM debt_account_disputes WHERE debt_account_disputes.debt_account_id = account.id) AS has_disputes`),
      db.raw(`EXISTS (SELECT 1 FROM documents WHERE documents.debt_account_id = account.id AND documents.status <> 'voided') AS has_documents`),
    ]);
}

/**
 * Whether an account has rows in the tables its payloads list (read with the account, so that
 * the lists of the accounts that have none are not read at all).
 */
interface AccountHas {
  has_plans: boolean;
  has_offers: boolean;
  has_disputes: boolean;
  has_documents: boolean;
}

async function imports(db: Knex, tenant: Tenant, ids: string[]): Promise<ImportRow[]> {
  return scoped(db, 'bulk_actions', tenant)
    .whereIn('bulk_actions.id', ids)
    .select(
      'bulk_actions.id',
      'bulk_actions.count',
      'bulk_actions.created_at',
      'bulk_actions.completed_at',
      db.raw(`(SELECT count(*) FROM bulk_rows WHERE bulk_rows.bulk_action_id = bulk_actions.id AND bulk_rows.status = 'failed')::int AS failed`),
    );
}

/**
 * Each account's latest plan (the open one, if any, is the one told) with its instalments (by
 * charge date): one query, a row per instalment (or one for a plan without any).
 */
async function latestPlansOf(db: Knex, tenant: Tenant, accountIds: string[]): Promise<{ latestPlans: PaymentPlanRow[]; planCharges: PlanChargeRow[] }> {
  if (accountIds.length === 0) return { latestPlans: [], planCharges: [] };
  const latest = scoped(db, 'payment_plans', tenant)
    .whereIn('debt_account_id', accountIds)
    .distinctOn('debt_account_id')
    .orderBy([{ column: 'debt_account_id' }, { column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .select(PLAN_COLUMNS)
    .as('plan');
  // Each plan's instalments by the (payment_plan_id, seq) index, plan by plan: a lateral
  // subquery kept whole by OFFSET 0 (else PostgreSQL flattens it into a join, and at a few
  // thousand instalments it hash-joined the plans with every instalment of the table).
  const rows: Record<string, unknown>[] = await db
    .from(latest)
    .joinRaw(
      `LEFT JOIN LATERAL (SELECT ${[...PLAN_CHARGE_COLUMNS, 'seq'].join(', ')} FROM payment_plan_charges WHERE payment_plan_charges.payment_plan_id = plan.id OFFSET 0) instalment ON true`,
    )
    .orderBy([{ column: 'plan.created_at' }, { column: 'plan.id' }, { column: 'instalment.charge_date' }, { column: 'instalment.seq' }])
    .select([...PLAN_COLUMNS.map((column) => `plan.${column}`), ...PLAN_CHARGE_COLUMNS.map((column) => `instalment.${column} as instalment_${column}`)]);
  const plans = new Map<string, PaymentPlanRow>();
  const planCharges: PlanChargeRow[] = [];
  for (const row of rows) {
    if (!plans.has(row.id as string)) plans.set(row.id as string, Object.fromEntries(PLAN_COLUMNS.map((column) => [column, row[column]])) as unknown as PaymentPlanRow);
    if (row.instalment_id !== null) planCharges.push(Object.fromEntries(PLAN_CHARGE_COLUMNS.map((column) => [column, row[`instalment_${column}`]])) as unknown as PlanChargeRow);
  }
  return { latestPlans: [...plans.values()], planCharges };
}

/** One query per table that some event needs, one after the other on the transaction. */
export async function loadPayloadRows(db: Knex, tenant: Tenant, needs: Needs): Promise<PayloadRows> {
  // Offers first: their charges are loaded with the payments, and their accounts (a plan's payload embeds the customer).
  const offers = await loadOffers(db, tenant, [...needs.offers]);
  for (const id of offerChargeIds(offers)) needs.payments.charges.add(id);
  // Payments next: the charges and transactions shown name accounts to embed.
  const payments = await loadPaymentRows(db, tenant, needs.payments);
  // Disputes named too: each embeds its account (an account's own disputes embed that account, already wanted).
  const named = needs.disputes.size > 0 ? await loadDisputeRows(db, tenant, [...needs.disputes], [...needs.accountDisputes]) : undefined;
  const disputedAccounts = [...(named?.disputes.values() ?? [])].map(({ dispute }) => dispute.debt_account_id);
  const wanted = [...new Set([...needs.accounts, ...needs.accountsWithCustomer, ...offers.map((offer) => offer.debt_account_id), ...payments.accountIds, ...disputedAccounts])];
  for (const offer of offers) needs.accountsWithCustomer.add(offer.debt_account_id);
  const accounts = needs.customers.size + wanted.length > 0 ? await accountsOf(db, tenant, [...needs.customers], wanted) : [];
  const accountById = byId(accounts);
  const having = (flag: keyof AccountHas, ids: Iterable<string>) => [...ids].filter((id) => accountById.get(id)?.[flag]);
  // Otherwise the accounts' own disputes, of those that have any.
  const { disputes, ofAccount } = named ?? (await loadDisputeRows(db, tenant, [], having('has_disputes', needs.accountDisputes)));
  const customerIds = [...new Set([...needs.customers, ...accounts.map((account) => account.customer_id)])];
  const whole = [...new Set([...needs.customers, ...[...needs.accountsWithCustomer].flatMap((id) => accountById.get(id)?.customer_id ?? [])])];
  const locationIds = [...new Set([...needs.locations, ...accounts.map((account) => account.location_id)])];

  // The payments' customers too: transaction payloads show their sequence numbers.
  const customerRows = [...new Set([...customerIds, ...payments.customerIds])];
  const customers: (CustomerRow & { number: string })[] =
    customerRows.length > 0 ? await scoped(db, 'customers', tenant).whereIn('id', customerRows).select([...CUSTOMER_COLUMNS, 'number']) : [];
  const addresses: AddressRow[] =
    whole.length > 0 ? await scoped(db, 'customer_addresses', tenant).whereIn('customer_id', whole).orderBy(OLDEST_FIRST('customer_addresses')).select(ADDRESS_COLUMNS) : [];
  // With each location its counter of accounts (migration 008), as the API shows it: location payloads tell it.
  const locations: (LocationRow & { debt_accounts_count: number | string })[] =
    locationIds.length > 0 ? await scoped(db, 'locations', tenant).whereIn('id', locationIds).select([...LOCATION_COLUMNS, 'debt_accounts_count']) : [];
  const locationUsage = new Map(locations.filter((row) => needs.locations.has(row.id)).map((row) => [row.id, Number(row.debt_accounts_count)]));
  const { latestPlans, planCharges } = await latestPlansOf(db, tenant, having('has_plans', accountById.keys()));
  // One read of payment methods: the whole customers', and those the plans and charges shown use.
  const methodIds = [...new Set([...latestPlans.flatMap((plan) => plan.payment_method_id ?? []), ...payments.methodIds])];
  const methodRows: PaymentMethodRow[] =
    whole.length + methodIds.length > 0
      ? await scoped(db, 'payment_methods', tenant)
          .where((wanted) => {
            if (whole.length > 0) wanted.whereIn('customer_id', whole);
            if (methodIds.length > 0) wanted.orWhereIn('id', methodIds);
          })
          .orderBy(OLDEST_FIRST('payment_methods'))
          .select([
            ...PAYMENT_METHOD_COLUMNS.map((column) => `payment_methods.${column}`),
            db.raw(
              `EXISTS (SELECT 1 FROM charges WHERE charges.payment_method_id = payment_methods.id AND charges.status = 'scheduled' AND charges.organization_id = payment_methods.organization_id AND charges.environment = payment_methods.environment) AS has_scheduled_charge`,
            ),
          ])
      : [];
  const wholeSet = new Set(whole);
  const methods = methodRows.filter((row) => wholeSet.has(row.customer_id));
  const methodById = byId(methodRows);
  // An offer is paid by charges on its family's accounts (its customer's, all loaded): when none
  // of them has an offer, no charge shown pays one.
  const offered = having('has_offers', accountById.keys());
  const { accountOffers, offersOfCharges } = await loadOffersOf(db, tenant, offered, offered.length > 0 ? payments.chargeList : []);
  const imported = needs.imports.size > 0 ? await imports(db, tenant, [...needs.imports]) : [];

  return {
    customers: byId(customers),
    addresses: groupBy(addresses, (row) => row.customer_id),
    paymentMethods: groupBy(methods, (row) => row.customer_id),
    accountsOfCustomer: groupBy(accounts, (row) => row.customer_id),
    accounts: accountById,
    children: groupBy(accounts, (row) => row.parent_id),
    locations: byId(locations),
    locationUsage,
    plans: new Map(latestPlans.map((row) => [row.debt_account_id, row])),
    planCharges: groupBy(planCharges, (row) => row.payment_plan_id),
    planMethods: methodById,
    imports: byId(imported),
    activity: await loadActivity(db, tenant, [...needs.activity]),
    payments: {
      ...payments,
      methods: methodById,
      offersOfCharges,
      customerNumbers: new Map(customers.map((row) => [row.id, Number(row.number)])),
    },
    docs: await loadDocumentTicketRows(db, tenant, { signatures: needs.signatures, tickets: needs.tickets, accountIds: having('has_documents', needs.accounts) }),
    offers: byId(offers),
    accountOffers,
    disputes,
    accountDisputes: ofAccount,
    built: new Map(),
  };
}
