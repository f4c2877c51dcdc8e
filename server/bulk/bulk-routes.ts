import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { envelope, pageRequest } from '../http/pagination';
import { QUEUES } from '../jobs/queue';
import { wakeWorker } from '../jobs/workers';
import { bulkProgress, createBulkAction, failedRows } from './bulk-service';

export function bulkRouter({ db, boss }: AppDeps): Router {
  const router = Router();

  router.post('/bulk', async (req, res) => {
    const action = await createBulkAction(db, boss, tenantOf(res), req.body);
    // Committed: this process's worker can start now instead of at its next poll.
    wakeWorker(boss, QUEUES.bulkImport);
    res.status(201).json({ data: action });
  });

  router.get('/bulk/:id', async (req, res) => {
    res.json({ data: await bulkProgress(db, tenantOf(res), req.params.id!) });
  });

  router.get('/bulk/:id/errors', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows } = await failedRows(db, tenantOf(res), req.params.id!, page.page, page.limit);
    const data = rows.map((row) => ({ id: row.position, payload: row.payload, errors: row.errors }));
    // The submitted date of an error record is when its row was processed.
    res.json(envelope(req, page, total, rows.map((row) => ({ created_at: row.processed_at })), data));
  });

  return router;
}
