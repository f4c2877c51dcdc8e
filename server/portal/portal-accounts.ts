/**
 * What a customer sees: their accounts (parents only: the customer deals with the parent;
 * archived ones hidden) and one account with its children, latest charges and transactions,
 * and its plan with the schedule. Reads go through the same services as the API.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { customerRepo, type CustomerRow } from '../customer-store/customer-repo';
import { paymentMethodRepo, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { chargeService, transactionService } from '../payments/charge-service';
import { planService } from '../payment-plans/plan-service';
import { PortalStop } from './page-error';
import { termsOf, type AccountTerms } from '../payment-terms/payment-terms';
import { disputeHoldOf } from '../disputes/dispute-hold-fact';

type S = components['schemas'];

/** An account with its terms (payment-terms.ts): what it may be paid. */
export interface AccountView extends AccountTerms {
  account: DebtAccountRow;
}

export interface AccountDetail extends AccountView {
  children: DebtAccountRow[];
  charges: S['Charge'][];
  transactions: S['Transaction'][];
  /** The account's latest plan, with its schedule. */
  plan: S['PaymentPlanDetail'] | undefined;
  hasOpenPlan: boolean;
}

const OPEN = ['pending_configuration', 'pending_enrollment', 'active'];
const notFound = () => new PortalStop(404, 'not_found', 'Account not found', 'We could not find this account among yours.');

export function viewOf(account: DebtAccountRow): AccountView {
  return { account, ...termsOf(account) };
}

export function portalAccounts(deps: AppDeps) {
  const { db } = deps;
  /** The account with the dispute hold's fact, so its terms show it "In dispute" with no way to pay. */
  const held = async (tenant: Tenant, row: DebtAccountRow): Promise<DebtAccountRow> => {
    const children = await debtAccountRepo(db, tenant).query().where(`${DEBT_ACCOUNTS}.parent_id`, row.id).select([`${DEBT_ACCOUNTS}.id`, `${DEBT_ACCOUNTS}.current_balance`]);
    const { heldChildren: _children, ...fact } = await disputeHoldOf(db, tenant, row, children);
    return { ...row, ...fact };
  };
  return {
    async customer(tenant: Tenant, customerId: string): Promise<CustomerRow> {
      const customer = await customerRepo(db, tenant).find(customerId);
      if (!customer) throw notFound();
      return customer;
    },

    async list(tenant: Tenant, customerId: string): Promise<AccountView[]> {
      const rows: DebtAccountRow[] = await debtAccountRepo(db, tenant)
        .query()
        .where(`${DEBT_ACCOUNTS}.customer_id`, customerId)
        .whereNull(`${DEBT_ACCOUNTS}.parent_id`)
        .whereNot(`${DEBT_ACCOUNTS}.status`, 'archived')
        .select(DEBT_ACCOUNT_COLUMNS)
        .orderBy([{ column: `${DEBT_ACCOUNTS}.created_at` }, { column: `${DEBT_ACCOUNTS}.id` }]);
      return (await Promise.all(rows.map((row) => held(tenant, row)))).map(viewOf);
    },

    /** One of the customer's visible parent accounts, or 404. */
    async find(tenant: Tenant, customerId: string, accountId: string): Promise<AccountView> {
      // Pages name accounts by id only (an external_id is the organization's, not the customer's).
      const row = /^[0-9a-f-]{36}$/i.test(accountId) ? await debtAccountRepo(db, tenant).find(accountId) : undefined;
      if (!row || row.id !== accountId.toLowerCase() || row.customer_id !== customerId || row.parent_id || row.status === 'archived') throw notFound();
      return viewOf(await held(tenant, row));
    },

    async detail(tenant: Tenant, customerId: string, accountId: string): Promise<AccountDetail> {
      const view = await this.find(tenant, customerId, accountId);
      const id = view.account.id;
      const children: DebtAccountRow[] = await debtAccountRepo(db, tenant)
        .query()
        .where(`${DEBT_ACCOUNTS}.parent_id`, id)
        .whereNot(`${DEBT_ACCOUNTS}.status`, 'archived')
        .select(DEBT_ACCOUNT_COLUMNS)
        .orderBy(`${DEBT_ACCOUNTS}.created_at`);
      const page = { page: 1, limit: 10 };
      const charges = (await chargeService(deps).list(tenant, { debt_account_id: id }, page)).data;
      const transactions = (await transactionService(deps).list(tenant, { debt_account_id: id }, page)).data;
      const plan = (await planService(deps).list(tenant, { page: 1, limit: 1 }, { debt_account_id: id })).data[0];
      return { ...view, children, charges, transactions, plan, hasOpenPlan: Boolean(plan && OPEN.includes(plan.status)) };
    },

    /** The customer's saved methods that can be charged today. */
    async methods(tenant: Tenant, customerId: string, now: Date): Promise<PaymentMethodRow[]> {
      const rows = await paymentMethodRepo(db, tenant).forCustomers([customerId]);
      return rows.filter((method) => method.gateway_token && isChargeable(method, now));
    },
  };
}
