import type { Response } from 'express';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { offerService } from './offer-service';
import { acceptOffer } from './offer-acceptance';

export function settlementOfferRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const offers = offerService(deps);

  routes.post('/debt-accounts/{id}/settlement-offers', async (req, res) => {
    res.status(201).json({ data: await offers.create(tenantOf(res), req.params.id, req.body) });
  });

  routes.get('/settlement-offers', async (req, res) => {
    const page = pageRequest(req);
    const status = req.query.status as components['schemas']['SettlementOfferStatus'] | undefined;
    const { total, rows, data } = await offers.list(tenantOf(res), page, { debt_account_id: req.query.debt_account_id, status });
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/settlement-offers/{id}', async (req, res) => {
    res.json({ data: await offers.find(tenantOf(res), req.params.id) });
  });

  routes.post('/settlement-offers/{id}/revoke', async (req, res) => {
    res.json({ data: await offers.revoke(tenantOf(res), req.params.id) });
  });

  routes.post('/settlement-offers/{id}/accept', async (req, res) => {
    const { offer, declined, chargeId } = await acceptOffer(deps, tenantOf(res), req.params.id, req.body, { channel: 'api' });
    if (declined) {
      // The document's ChargeDeclined: the offer is pending again; the failed charge is kept.
      (res as Response).status(declined.status).json({ ...declined.body(), charge_id: chargeId });
      return;
    }
    res.json({ data: offer });
  });
}
