/** `DELETE /customers/{id}/portal-account`: the agency removes a customer's Portal account. */
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import type { TypedRoutes } from '../http/typed-routes';
import { customerRepo } from '../customer-store/customer-repo';
import { portalAccountRepo } from './portal-account-repo';

export function portalAccountRoutes(routes: TypedRoutes, deps: AppDeps): void {
  routes.delete('/customers/{id}/portal-account', async (req, res) => {
    const tenant = tenantOf(res);
    const customer = await customerRepo(deps.db, tenant).find(req.params.id);
    if (!customer) throw ApiError.notFound('Customer');
    // Its browser sessions and unused links go with it (ON DELETE CASCADE, migration 021).
    if (!(await portalAccountRepo(deps.db, tenant).deleteOfCustomer(customer.id))) throw ApiError.notFound('Portal account');
    res.json({ success: true });
  });
}
