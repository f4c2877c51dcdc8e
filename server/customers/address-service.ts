/**
 * The address operations of a customer. Each locks the customer's row, so one customer's
 * address changes queue up, and each changes the customer's payload (its addresses), so it
 * records customer.update.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { addressRepo, type AddressRow } from '../customer-store/address-repo';
import { addAddress, changeAddress, removeAddress } from './address-rules';
import { addressToApi } from '../customer-store/customer-mapper';
import { customerRepo } from '../customer-store/customer-repo';

type Schemas = components['schemas'];

export function addressService({ db, events }: Pick<AppDeps, 'db' | 'events'>) {
  const lockedCustomer = async (trx: Knex, tenant: Tenant, key: string) => {
    const customer = await customerRepo(trx, tenant).find(key, { forUpdate: true });
    if (!customer) throw ApiError.notFound('Customer');
    return customer;
  };

  const addressOf = async (trx: Knex, tenant: Tenant, customerId: string, addressId: string): Promise<AddressRow> => {
    const address = await addressRepo(trx, tenant).find(customerId, addressId);
    if (!address) throw ApiError.notFound('Address');
    return address;
  };

  /** Runs `change` on the locked customer, then records that the customer changed. */
  const changing = <T>(tenant: Tenant, customerKey: string, change: (trx: Knex.Transaction, customerId: string) => Promise<T>) =>
    db.transaction(async (trx) => {
      const customer = await lockedCustomer(trx, tenant, customerKey);
      const result = await change(trx, customer.id);
      await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
      return result;
    });

  return {
    async list(tenant: Tenant, customerKey: string): Promise<Schemas['Address'][]> {
      const customer = await customerRepo(db, tenant).find(customerKey);
      if (!customer) throw ApiError.notFound('Customer');
      return (await addressRepo(db, tenant).forCustomers([customer.id])).map(addressToApi);
    },

    async add(tenant: Tenant, customerKey: string, body: Schemas['AddressCreate']): Promise<Schemas['Address']> {
      return addressToApi(await changing(tenant, customerKey, (trx, customerId) => addAddress(trx, tenant, customerId, body)));
    },

    async change(tenant: Tenant, customerKey: string, addressId: string, body: Schemas['AddressUpdate']): Promise<Schemas['Address']> {
      const changed = await changing(tenant, customerKey, async (trx, customerId) =>
        changeAddress(trx, tenant, await addressOf(trx, tenant, customerId, addressId), body),
      );
      return addressToApi(changed);
    },

    async remove(tenant: Tenant, customerKey: string, addressId: string): Promise<void> {
      await changing(tenant, customerKey, async (trx, customerId) => removeAddress(trx, tenant, await addressOf(trx, tenant, customerId, addressId)));
    },
  };
}
