/**
 * The rules of creating customer sessions that the document states but a schema cannot
 * check: the customer and the account exist in the tenant, the account is the customer's,
 * a tag name at most once. (Ids against destination, valid_until against is_valid_forever and
 * the two targets have been refused by the validator already.)
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { hashToken } from '../crypto/secrets';
import { customerRepo, type CustomerRow } from '../customer-store/customer-repo';
import { isForeignKeyViolation } from '../db/tenant';
import { debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { expiryAtCreation } from './customer-session-lifetime';
import { newCustomerSessionToken, newShortCode, PORTAL_URL_MAX_LENGTH, portalUrlLength } from './customer-session-links';
import { bulkCustomerSessionToApi, customerSessionToApi } from './customer-session-mapper';
import { customerSessionRepo, type CustomerSessionRow } from './customer-session-repo';
import { nowFor } from '../kernel/clock';

type Schemas = components['schemas'];
type Create = Schemas['CustomerSessionCreate'];
type Destination = Schemas['SessionDestination'];
export type CustomerSessionDeps = Pick<AppDeps, 'db' | 'config' | 'secrets' | 'clock'>;

interface Checked {
  body: Create;
  customer: CustomerRow;
  account: DebtAccountRow | undefined;
}

export function defaultDestination(body: Create): Destination {
  if (body.debt_account_dispute_id) return 'account_disputes_detail';
  if (body.debt_account_id) return 'account_detail';
  return 'accounts_list';
}

/** One request item against the tenant's data; field keys start with `prefix` (`[3].` in bulk). */
async function check(trx: Knex, deps: CustomerSessionDeps, tenant: Tenant, body: Create, prefix: string): Promise<{ checked?: Checked; errors: FieldErrors }> {
  const errors: FieldErrors = {};
  const customer = await customerRepo(trx, tenant).find(body.customer_id);
  if (!customer) errors[`${prefix}customer_id`] = ['does not match a customer'];
  let account: DebtAccountRow | undefined;
  if (body.debt_account_id !== undefined) {
    account = await debtAccountRepo(trx, tenant).find(body.debt_account_id);
    if (!account) errors[`${prefix}debt_account_id`] = ['does not match a debt account'];
    else if (customer && account.customer_id !== customer.id) errors[`${prefix}debt_account_id`] = ['is a debt account of another customer'];
  }
  const names = (body.tags ?? []).map((tag) => tag.name);
  if (new Set(names).size !== names.length) errors[`${prefix}tags`] = ['must not name a tag twice'];
  else if (customer && body.tags && body.tags.length > 0) {
    const target = { destination: body.destination ?? defaultDestination(body), debt_account_id: account?.id ?? null, debt_account_dispute_id: body.debt_account_dispute_id ?? null };
    if (portalUrlLength(deps.config.portalUrl, target, tenant.organizationId, body.tags) > PORTAL_URL_MAX_LENGTH) {
      errors[`${prefix}tags`] = [`make portal_url longer than ${PORTAL_URL_MAX_LENGTH} characters once URL-encoded; use shorter values`];
    }
  }
  if (Object.keys(errors).length > 0) return { errors };
  return { checked: { body, customer: customer!, account }, errors };
}

async function insert(trx: Knex, deps: CustomerSessionDeps, tenant: Tenant, { body, customer, account }: Checked): Promise<{ row: CustomerSessionRow; token: string }> {
  const token = newCustomerSessionToken();
  const now = nowFor(deps.clock, tenant);
  const lifetime = { valid_until_hours: body.valid_until ?? null, is_valid_forever: body.is_valid_forever === true };
  const row = await customerSessionRepo(trx, tenant).insert(
    {
      customer_id: customer.id,
      debt_account_id: account?.id ?? null,
      debt_account_dispute_id: body.debt_account_dispute_id ?? null,
      destination: body.destination ?? defaultDestination(body),
      tags: body.tags ?? [],
      return_url: body.return_url ?? null,
      expiration_return_url: body.expiration_return_url ?? null,
      verification: body.verification === true,
      token_hash: hashToken(token),
      token_sealed: deps.secrets.encrypt(token),
      ...lifetime,
      expires_at: expiryAtCreation(lifetime, now),
      created_at: now,
    },
    body.short_link ? newShortCode : undefined,
  );
  return { row, token };
}

/** A customer or account deleted between the check and the insert: the key refuses it. */
async function stillThere<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isForeignKeyViolation(error)) throw ApiError.conflict('A customer or debt account of the request was deleted meanwhile.');
    throw error;
  }
}

async function createOne(deps: CustomerSessionDeps, tenant: Tenant, body: Create): Promise<Schemas['CustomerSession']> {
  return stillThere(() =>
    deps.db.transaction(async (trx) => {
      const { checked, errors } = await check(trx, deps, tenant, body, '');
      if (!checked) throw ApiError.invalid(errors);
      const { row, token } = await insert(trx, deps, tenant, checked);
      return customerSessionToApi(row, token, deps.config);
    }),
  );
}

/** All items or none: every invalid item is reported, keyed by its index, and nothing is made. */
async function createMany(deps: CustomerSessionDeps, tenant: Tenant, items: Create[]): Promise<Schemas['BulkCustomerSession'][]> {
  return stillThere(() =>
    deps.db.transaction(async (trx) => {
      const checked: Checked[] = [];
      const errors: FieldErrors = {};
      for (const [index, body] of items.entries()) {
        const result = await check(trx, deps, tenant, body, `[${index}].`);
        Object.assign(errors, result.errors);
        if (result.checked) checked.push(result.checked);
      }
      if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
      const sessions: Schemas['BulkCustomerSession'][] = [];
      for (const item of checked) {
        const { row, token } = await insert(trx, deps, tenant, item);
        sessions.push(bulkCustomerSessionToApi(row, token, deps.config, item.body));
      }
      return sessions;
    }),
  );
}

/**
 * A session the service opens itself for the link of an e-mail, on the caller's transaction (a
 * payment reminder's link to the account's page): fixed to `validUntilHours`, tagged as the
 * messages that carry it. Always with verification: whoever opens it answers the Portal's
 * question (date of birth, last 4 of the SSN or a ZIP code) before any name or balance shows,
 * since a forwarded e-mail or a shared mailbox would otherwise be a disclosure to a third
 * party (FDCPA §805(b), 12 CFR 1006.6(d)). Answers its `portal_url`.
 */
export async function openSessionIn(
  trx: Knex,
  deps: CustomerSessionDeps,
  tenant: Tenant,
  request: { customer: CustomerRow; account?: DebtAccountRow; validUntilHours: number; tags: Create['tags']; destination?: Destination },
): Promise<string> {
  const body: Create = {
    customer_id: request.customer.id,
    ...(request.account ? { debt_account_id: request.account.id } : {}),
    ...(request.destination ? { destination: request.destination } : {}),
    valid_until: request.validUntilHours,
    tags: request.tags,
    verification: true,
  } as Create;
  const { row, token } = await insert(trx, deps, tenant, { body, customer: request.customer, account: request.account });
  return customerSessionToApi(row, token, deps.config).portal_url;
}

export function customerSessionService(deps: CustomerSessionDeps) {
  return {
    create: (tenant: Tenant, body: Create) => createOne(deps, tenant, body),
    createMany: (tenant: Tenant, items: Create[]) => createMany(deps, tenant, items),
  };
}
