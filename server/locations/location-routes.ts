import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { LOCATION_COLUMNS, LOCATIONS, locationRepo, type LocationRow } from './location-repo';
import { createLocation, deleteLocation, findLocation, loadLocations, updateLocation } from './location-service';

export function locationRouter({ db, boss }: AppDeps): Router {
  const router = Router();

  router.post('/locations', async (req, res) => {
    res.status(201).json({ data: await createLocation(db, boss, tenantOf(res), req.body) });
  });

  router.get('/locations', async (req, res) => {
    const tenant = tenantOf(res);
    const page = pageRequest(req);
    const { total, rows } = await paginate<LocationRow>(locationRepo(db, tenant).query(), page, LOCATION_COLUMNS, LOCATIONS);
    res.json(envelope(req, page, total, rows, await loadLocations(db, tenant, rows)));
  });

  router.get('/locations/:id', async (req, res) => {
    res.json({ data: await findLocation(db, tenantOf(res), req.params.id!) });
  });

  router.put('/locations/:id', async (req, res) => {
    res.json({ data: await updateLocation(db, boss, tenantOf(res), req.params.id!, req.body) });
  });

  router.delete('/locations/:id', async (req, res) => {
    await deleteLocation(db, boss, tenantOf(res), req.params.id!);
    res.json({ success: true });
  });

  return router;
}
