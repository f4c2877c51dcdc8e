/**
 * The primary-address rule, shared by the customer and address operations: a customer with
 * addresses has exactly one primary. The first address is primary; making one primary
 * demotes the others; deleting the primary promotes the oldest remaining one. Callers hold
 * the customer's row lock, so concurrent changes of one customer's addresses queue up.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { addressRepo, type AddressRow, type AddressValues } from '../customer-store/address-repo';

type AddressInput = components['schemas']['AddressCreate'] | components['schemas']['AddressUpdate'];

const FIELDS = ['name', 'line1', 'line2', 'city', 'state', 'country', 'postal_code'] as const;

function values(input: AddressInput): AddressValues {
  const picked: AddressValues = {};
  for (const field of FIELDS) if (input[field] !== undefined) (picked as Record<string, unknown>)[field] = input[field];
  return picked;
}

export async function addAddress(trx: Knex, tenant: Tenant, customerId: string, input: AddressInput): Promise<AddressRow> {
  const repo = addressRepo(trx, tenant);
  const first = (await repo.count(customerId)) === 0;
  const primary = first || input.is_primary === true;
  if (primary && !first) await repo.demoteAll(customerId);
  return repo.insert(customerId, { ...values(input), is_primary: primary });
}

/** `field` prefixes error keys: `address.` inside a customer update, nothing on its own path. */
export async function changeAddress(
  trx: Knex,
  tenant: Tenant,
  address: AddressRow,
  input: AddressInput,
  field = '',
): Promise<AddressRow> {
  const repo = addressRepo(trx, tenant);
  if (input.is_primary === false && address.is_primary) {
    throw ApiError.field(`${field}is_primary`, 'the primary address cannot be demoted; make another address primary instead');
  }
  const makePrimary = input.is_primary === true && !address.is_primary;
  if (makePrimary) await repo.demoteAll(address.customer_id);
  return repo.update(address.id, { ...values(input), ...(makePrimary ? { is_primary: true } : {}) });
}

export async function removeAddress(trx: Knex, tenant: Tenant, address: AddressRow): Promise<void> {
  const repo = addressRepo(trx, tenant);
  await repo.delete(address.id);
  if (address.is_primary) await repo.promoteOldest(address.customer_id);
}
